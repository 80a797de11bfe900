package scenario

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/internal/artifacts"
)

// Request is one run asked for: the catalogue entry (Scenario) as this
// run runs it, where (At, its driver resolved once by NewRequest), the
// settings a user added and whether a NON-STRICT verdict fails it. Every
// stage of a run, from its folder to its record, takes it as it is.
type Request struct {
	Scenario Scenario
	// At is where the run happens; At.Driver is never nil.
	At Coordinates
	// Added are settings a user adds to the run (kconform run --set), in
	// the driver's own names, applied last.
	Added map[string]string
	// Strict makes a NON-STRICT verdict fail the run (kconform --strict,
	// KCONFORM_STRICT=1); by default it passes and is shown as such.
	Strict bool
}

// NewRequest resolves a run of s at at, once: a scenario that names its
// own client (a known-bad run's expected failure, the broken producer) runs that
// one, whose driver is looked up here; any other runs at's driver, looked
// up here when at was made by hand.
func NewRequest(s Scenario, at Coordinates) (Request, error) {
	if s.Client != "" && s.Client != at.Client {
		at.Client, at.Driver = s.Client, nil
	}
	if at.Driver == nil {
		d, err := driver.Lookup(at.Client)
		if err != nil {
			return Request{}, err
		}
		at.Driver = d
	}
	return Request{Scenario: s, At: at}, nil
}

// String names the run as progress lines and summaries show it.
func (r Request) String() string { return fmt.Sprintf("%s / %s", r.Folder(), r.At) }

// Key is the key of the record the run goes to (Cell).
func (r Request) Key() string { return r.Cell().Key() }

// Folder is the name of a run's folder under <version>-<mode>/<client>/:
// the scenario's name; "-known-bad-" and the expected failure's label for a run
// that must fail in a known way; "-real-time" for the client's defaults;
// its variant ("-tv1"); "-added" when the user added settings.
func (r Request) Folder() string {
	s := r.Scenario
	f := s.Name
	if s.Expect != nil {
		label := s.Expect.Label
		if label == "" {
			label = s.Client
		}
		f += "-known-bad-" + label
	}
	if s.ClientDefaults {
		f += "-" + artifacts.TimingReal.String()
	}
	if !s.Variant.IsZero() {
		f += "-" + s.Variant.String()
	}
	if len(r.Added) > 0 {
		f += "-added"
	}
	return f
}

// AddedList is r.Added as key=value, in key order, as records keep them.
func (r Request) AddedList() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(r.Added)) {
		out = append(out, k+"="+r.Added[k])
	}
	return out
}

// Coordinates say where a run happens: the Kafka release, its mode and
// the client. Resolve works them out once, from what a user typed, for the
// command and the suites alike; everything below takes them as they are.
type Coordinates struct {
	// Broker is the broker implementation: Apache Kafka (the zero value)
	// or Tansu; on a cluster kconform did not start, External.
	Broker fixtures.Broker
	// Version is the broker's release (a Kafka release, never a line such
	// as "4.x"); on a cluster kconform did not start, the name the user
	// gave it (--cluster-name).
	Version string
	// Mode is zk or kraft (Tansu: postgres), never empty but on a cluster
	// kconform did not start.
	Mode fixtures.Mode
	// External is the cluster kconform did not start (--bootstrap), or
	// nil for a cluster Execute starts.
	External *fixtures.External
	// Client is the driver's name (a built-in name or the user's command
	// line as given).
	Client string
	// Driver is the driver Client names, looked up once (Resolve,
	// NewRequest) and carried to every later stage of the run: its
	// preparation, whether it runs transactions, the run itself.
	Driver *driver.Driver
}

// String is how a run's place is shown: "franz-go on Kafka 4.4.0 kraft".
func (c Coordinates) String() string {
	switch {
	case c.External != nil:
		return fmt.Sprintf("%s on %s (the cluster at %s)", c.Client, c.Version, strings.Join(c.External.Bootstrap, ","))
	case c.Broker == fixtures.Tansu:
		return fmt.Sprintf("%s on Tansu %s %s", c.Client, c.Version, c.Mode)
	}
	return fmt.Sprintf("%s on Kafka %s %s", c.Client, c.Version, c.Mode)
}

// ExternalBroker is the broker coordinate of a cluster kconform did not
// start: its records' broker, beside the name the user gave it.
const ExternalBroker fixtures.Broker = "external"

// ResolveOn is Resolve on broker: Apache Kafka's release and mode, or
// Tansu's release and storage; or, given x, the cluster kconform did not
// start that x finds, its records named version ("cluster" by default).
func ResolveOn(broker fixtures.Broker, version, mode, client string, x *fixtures.External) (Coordinates, error) {
	switch {
	case x != nil:
		if err := x.Check(); err != nil {
			return Coordinates{}, err
		}
		if version == "" {
			version = "cluster"
		}
		d, err := driver.Lookup(client)
		if err != nil {
			return Coordinates{}, err
		}
		return Coordinates{Broker: ExternalBroker, Version: version, Client: d.Name, Driver: d, External: x}, nil
	case broker == fixtures.Tansu:
		spec := fixtures.Spec{Broker: broker, Version: version, Mode: fixtures.Mode(mode)}
		if err := spec.Check(); err != nil {
			return Coordinates{}, err
		}
		d, err := driver.Lookup(client)
		if err != nil {
			return Coordinates{}, err
		}
		return Coordinates{Broker: broker, Version: version, Mode: cmp.Or(fixtures.Mode(mode), fixtures.Postgres), Client: d.Name, Driver: d}, nil
	case broker == "" || broker == fixtures.ApacheKafka:
		return Resolve(version, mode, client)
	}
	return Coordinates{}, fmt.Errorf("broker %q is unknown: use kafka or tansu (or --bootstrap for a cluster kconform did not start)", broker)
}

// Resolve turns a version ("4.x" is the newest 4), a mode ("" for the
// version's default) and a driver name or command line ("" for the
// reference producer) into Coordinates, refusing what no run could use.
func Resolve(version, mode, client string) (Coordinates, error) {
	return ResolveBy(version, mode, client, driver.Lookup)
}

// ResolveBy is Resolve with the driver looked up by lookup: a plan of many
// versions passes one that looks each client up once.
func ResolveBy(version, mode, client string, lookup func(string) (*driver.Driver, error)) (Coordinates, error) {
	version = fixtures.ResolveVersion(version)
	m := fixtures.ModeFor(version, fixtures.Mode(mode))
	if err := (fixtures.Spec{Version: version, Mode: m}).Check(); err != nil {
		return Coordinates{}, err
	}
	d, err := lookup(client)
	if err != nil {
		return Coordinates{}, err
	}
	return Coordinates{Version: version, Mode: m, Client: d.Name, Driver: d}, nil
}

// brokerName is the broker as a run's identity names it: "" for Apache
// Kafka, so every record filed before the broker axis keeps its key.
func (c Coordinates) brokerName() string {
	if c.Broker == fixtures.ApacheKafka {
		return ""
	}
	return string(c.Broker)
}

// Slot is one run's place among its request's runs: its artifacts folder
// and the suffix added to the run's folder name ("-run2" for a repeat).
type Slot struct {
	Root, Suffix string
}

// Cell is the identity of the run (artifacts.Cell): its record's key and
// its runs' place.
func (r Request) Cell() artifacts.Cell {
	return artifacts.Cell{Broker: r.At.brokerName(), Kafka: r.At.Version, Mode: string(r.At.Mode), Client: r.At.Client, Scenario: r.Scenario.Name,
		Variant: r.Scenario.Variant, ClientDefaults: r.Scenario.ClientDefaults, Added: r.AddedList()}
}

// Dir is the run's artifacts folder: its cell's (artifacts.Cell.RunFolder),
// named by the request's Folder and the slot's suffix.
func (r Request) Dir(slot Slot) string {
	return r.Cell().RunFolder(slot.Root, r.Folder()+slot.Suffix)
}

// Execute is the one runner the suites and every command share: it
// records a scenario that does not apply (Result.NotApplicable), or starts
// a fresh cluster, runs the scenario on it and closes it. A run that could
// not finish is recorded in its folder (artifacts.Failed) and returned as
// an error; node logs are saved with any run that did not pass.
//
// The request's driver must be prepared (driver.Driver.Prepare) before:
// matrix.Prepare prepares every job's before any cluster starts.
func (r Request) Execute(ctx context.Context, slot Slot, progress io.Writer) (*Result, error) {
	dir := r.Dir(slot)
	s, at := r.Scenario, r.At
	if why := r.notApplicable(); why != "" {
		if err := artifacts.NotApplicable(dir, r.Cell(), why); err != nil {
			return nil, err
		}
		return &Result{Dir: dir, NotApplicable: why}, nil
	}
	start := func() (*fixtures.Cluster, error) { return fixtures.Start(ctx, s.Spec(at), progress) }
	if at.External != nil {
		start = func() (*fixtures.Cluster, error) {
			return fixtures.Attach(ctx, *at.External, s.Spec(at).Topics, progress)
		}
	}
	c, err := start()
	// A cluster that did not become ready in time (a loaded machine, many
	// clusters starting at once) is not the run's fault: one fresh try,
	// then the run is recorded as not carried out rather than ending a
	// whole matrix.
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(progress, "kconform: %s: the cluster did not become ready (%v); starting a fresh one\n", s.Name, err)
		c, err = start()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			_ = artifacts.Failed(dir, r.Cell(), err)
			return nil, &RunError{Dir: dir, Err: fmt.Errorf("cluster start: %w", err)}
		}
	}
	if err != nil {
		return nil, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	if why := r.notApplicableOn(c); why != "" {
		if err := artifacts.NotApplicable(dir, r.Cell(), why); err != nil {
			return nil, err
		}
		return &Result{Dir: dir, NotApplicable: why}, nil
	}
	res, err := r.runOn(ctx, c, dir, progress)
	// A node fault the user gave no command for: the scenario does not
	// apply to that cluster, whatever ran before the step.
	var na *chaos.NotApplicable
	if errors.As(err, &na) {
		if err := artifacts.NotApplicable(dir, r.Cell(), na.Why); err != nil {
			return nil, err
		}
		return &Result{Dir: dir, NotApplicable: na.Why}, nil
	}
	if err != nil {
		saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = c.SaveLogs(saveCtx, dir)
		if ctx.Err() == nil {
			_ = artifacts.Failed(dir, r.Cell(), err)
		}
		return nil, &RunError{Dir: dir, Err: err}
	}
	if !res.OK() || !res.Verdict.OK(false) {
		_ = c.SaveLogs(context.WithoutCancel(ctx), dir)
	}
	return res, nil
}

// notApplicable says why the request cannot run, or "": the version or
// mode lacks what the scenario needs, or it is transactional and the
// driver runs no transactions.
func (r Request) notApplicable() string {
	s, at, drv := r.Scenario, r.At, r.At.Driver
	switch {
	case at.Broker == fixtures.Tansu && s.KafkaOnly != "":
		return "Tansu " + at.Version + ": " + s.KafkaOnly
	case at.Broker == fixtures.Tansu && s.SeveralBrokers != "":
		return fmt.Sprintf("Tansu %s names one broker (node %d) in its metadata, and %s", at.Version, fixtures.TansuNode, s.SeveralBrokers)
	case at.Broker == fixtures.Tansu && s.Producer.Transactional():
		return "Tansu " + at.Version + ": " + fixtures.TansuNoTransactions
	case at.External != nil && (len(s.BrokerConfig) > 0 || len(s.Features) > 0):
		return "it sets broker settings or cluster features kconform gives only a cluster it starts (" + strings.Join(slices.Sorted(maps.Keys(s.BrokerConfig)), ", ") + featureNames(s.Features) + ")"
	}
	if s.NotApplicable != nil && at.Broker != fixtures.Tansu && at.External == nil {
		if why := s.NotApplicable(at.Version, at.Mode); why != "" {
			return why
		}
	}
	if s.Producer.Transactional() && drv.NoTransactions() != "" {
		return at.Client + ": " + drv.NoTransactions()
	}
	if s.Idles && !drv.Idles() {
		return at.Client + ": its driver does not take the idle and resume commands the scenario's application needs (docs/clients.md)"
	}
	return ""
}

// notApplicableOn says why the request cannot run on c, a cluster
// kconform did not start, once its brokers are known, or "".
func (r Request) notApplicableOn(c *fixtures.Cluster) string {
	if n := len(c.Brokers()); c.External() && n < 3 && r.Scenario.SeveralBrokers != "" {
		return fmt.Sprintf("the cluster has %d broker(s), and %s", n, r.Scenario.SeveralBrokers)
	}
	return ""
}

// featureNames lists features as "; features a, b", or "".
func featureNames(features map[string]int) string {
	if len(features) == 0 {
		return ""
	}
	return "; features " + strings.Join(slices.Sorted(maps.Keys(features)), ", ")
}

// RunError is a scenario run that could not finish (a driver that
// crashed, a fault that could not be applied): recorded in Dir.
type RunError struct {
	Dir string
	Err error
}

func (e *RunError) Error() string { return fmt.Sprintf("%v (artifacts in %s)", e.Err, e.Dir) }

// Unwrap gives the cause.
func (e *RunError) Unwrap() error { return e.Err }
