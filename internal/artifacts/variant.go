package artifacts

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kconform/kconform/history"
)

// Variant is how a run varies its catalogue scenario, each way a cell of
// its own: its workload in transactions, the cluster formatted with a
// transaction.version level, other producers beside the client on its
// topic. The zero Variant is the scenario as the catalogue has it. It is
// written in one place (String, its JSON: "transactional",
// "tv2-neighbour.txn-neighbour.plain") and read in one (UnmarshalText);
// no other code builds or cuts its text.
type Variant struct {
	// Transactional: a workload not transactional of its own run in
	// transactions (scenario.Scenario.WithTransactions).
	Transactional bool
	// tv is the transaction.version level plus one, 0 when the cluster
	// keeps its release's own transaction protocol.
	tv int
	// NeighbourTxn and NeighbourPlain: another producer on the topic
	// beside the client (history.NeighbourTxn, history.NeighbourPlain).
	NeighbourTxn, NeighbourPlain bool
}

// WithTransactionVersion is the variant with the cluster formatted with
// transaction.version level.
func (v Variant) WithTransactionVersion(level int) Variant {
	v.tv = level + 1
	return v
}

// TransactionVersion is the transaction.version level the cluster was
// formatted with; ok is false when the release's own protocol ran.
func (v Variant) TransactionVersion() (level int, ok bool) {
	return v.tv - 1, v.tv > 0
}

// WithNeighbour is the variant with a neighbour of kind on the topic
// (history.NeighbourTxn or history.NeighbourPlain).
func (v Variant) WithNeighbour(kind string) (Variant, error) {
	switch kind {
	case history.NeighbourTxn:
		v.NeighbourTxn = true
	case history.NeighbourPlain:
		v.NeighbourPlain = true
	default:
		return v, fmt.Errorf("%q is not a neighbour: use %s or %s", kind, history.NeighbourTxn, history.NeighbourPlain)
	}
	return v, nil
}

// Neighbours are the kinds of the variant's neighbours, in the order its
// text names them.
func (v Variant) Neighbours() []string {
	var out []string
	if v.NeighbourTxn {
		out = append(out, history.NeighbourTxn)
	}
	if v.NeighbourPlain {
		out = append(out, history.NeighbourPlain)
	}
	return out
}

// IsZero tells whether the variant is the catalogue's scenario itself.
func (v Variant) IsZero() bool { return v == Variant{} }

// neighbourPart starts a variant's part for a neighbour on the topic.
const neighbourPart = "neighbour."

// String is the variant's one written form, its parts in a fixed order
// joined by "-": "transactional", "tv<level>", "neighbour.<kind>" per
// neighbour; "" for the zero variant. Folder and cell names and the
// stored JSON all take it from here.
func (v Variant) String() string {
	var parts []string
	if v.Transactional {
		parts = append(parts, "transactional")
	}
	if level, ok := v.TransactionVersion(); ok {
		parts = append(parts, "tv"+strconv.Itoa(level))
	}
	for _, k := range v.Neighbours() {
		parts = append(parts, neighbourPart+k)
	}
	return strings.Join(parts, "-")
}

// MarshalText writes the variant as String does.
func (v Variant) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText is the one reader of a variant's text (String's form). A
// run.json written before its cell was typed may name real time in its
// variant, first ("real-time", "real-time-transactional"): that part is
// left out, the cell's ClientDefaults keying real time.
func (v *Variant) UnmarshalText(b []byte) error {
	*v = Variant{}
	text := strings.TrimPrefix(strings.TrimPrefix(string(b), TimingReal.String()), "-")
	if text == "" {
		return nil
	}
	for _, part := range strings.Split(text, "-") {
		if level, ok := strings.CutPrefix(part, "tv"); ok {
			n, err := strconv.Atoi(level)
			if err != nil || n < 0 {
				return fmt.Errorf("variant %q: %q is no transaction.version level (tv0, tv1, tv2)", b, part)
			}
			*v = v.WithTransactionVersion(n)
			continue
		}
		if kind, ok := strings.CutPrefix(part, neighbourPart); ok {
			nv, err := v.WithNeighbour(kind)
			if err != nil {
				return fmt.Errorf("variant %q: %w", b, err)
			}
			*v = nv
			continue
		}
		switch part {
		case "transactional":
			v.Transactional = true
		default:
			return fmt.Errorf("variant %q: unknown part %q (a variant is transactional, tv<level> and neighbour.<kind> joined by -)", b, part)
		}
	}
	return nil
}
