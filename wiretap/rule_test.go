package wiretap

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
)

// fixedDelay is a Rule that delays every request alike.
type fixedDelay time.Duration

func (d fixedDelay) Delay(Request) time.Duration { return time.Duration(d) }

// readAnswer reads one answer frame from c and returns its correlation id.
func readAnswer(t *testing.T, c net.Conn) int32 {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	size := make([]byte, 4)
	if _, err := io.ReadFull(c, size); err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatalf("a broken answer: %v", err)
	}
	return int32(binary.BigEndian.Uint32(body[:4]))
}

// An applied Rule delays the client's requests one way: each reaches the
// broker the delay after it was sent, in the order sent, none lost, and
// each answer comes back; once the Rule's time is up, the tap records a
// heal of the broker and requests go on at once.
func TestTapRuleDelaysRequestsNotLosesThem(t *testing.T) {
	const delay, lasting = 400 * time.Millisecond, 1200 * time.Millisecond
	f, up, tap := tapInFrontOfFake(t)
	if err := tap.Apply(up, fixedDelay(delay), history.Fault{Action: history.ActionDelayRequests, Detail: "400ms for 1.2s"}, lasting); err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", tap.AddrFor(up), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sent := time.Now()
	for corr := int32(1); corr <= 3; corr++ {
		if _, err := c.Write(requestFrame(kmsg.ListOffsets, 0, corr, kmsg.NewPtrListOffsetsRequest())); err != nil {
			t.Fatal(err)
		}
	}
	for want := int32(1); want <= 3; want++ {
		if corr := readAnswer(t, c); corr != want {
			t.Fatalf("answer for correlation id %d, want %d: an answer lost or out of order", corr, want)
		}
	}
	if got := strings.Join(f.log(), ","); got != "ListOffsets,ListOffsets,ListOffsets" {
		t.Fatalf("the broker read %s, want the three requests", got)
	}
	for i, at := range f.times() {
		if at.Sub(sent) < delay {
			t.Errorf("request %d reached the broker %s after it was sent, before the %s delay", i+1, at.Sub(sent), delay)
		}
	}

	waitFor(t, "the delay's end recorded", func() bool { return len(tap.Faults()) == 2 })
	faults := tap.Faults()
	if faults[0].Action != history.ActionDelayRequests || faults[0].Target != up || faults[0].Detail != "400ms for 1.2s" ||
		faults[1].Action != history.ActionHeal || faults[1].Target != up || !faults[1].Repair || faults[1].Detail != "delay-requests ended after 1.2s" {
		t.Fatalf("faults %v: want the delay on %s, then a heal of it", faults, up)
	}
	if d := faults[1].Time.Sub(faults[0].Time); d < lasting {
		t.Errorf("the delay ended %s after it began, before its %s", d, lasting)
	}
	sent = time.Now()
	if _, err := c.Write(requestFrame(kmsg.ListOffsets, 0, 4, kmsg.NewPtrListOffsetsRequest())); err != nil {
		t.Fatal(err)
	}
	if corr := readAnswer(t, c); corr != 4 {
		t.Fatalf("answer for correlation id %d, want 4", corr)
	}
	if at := f.times()[3]; at.Sub(sent) >= delay {
		t.Errorf("a request sent after the delay ended reached the broker %s later: still delayed", at.Sub(sent))
	}
}

// A request the client gave up on while it was delayed (the connection
// closed) still reaches the broker, then the close: the delay loses
// nothing, and the answer the client never got is in the history. Heal
// ends the Rule; what it delayed is still on its way.
func TestTapDelayedRequestOutlivesTheClientsClose(t *testing.T) {
	f, up, tap := tapInFrontOfFake(t)
	if err := tap.Apply(up, fixedDelay(300*time.Millisecond), history.Fault{Action: history.ActionDelayRequests, Detail: "300ms"}, 0); err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", tap.AddrFor(up), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(requestFrame(kmsg.ListOffsets, 0, 1, kmsg.NewPtrListOffsetsRequest())); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the tap has read it
	tap.Heal()
	c.Close()
	waitFor(t, "the broker reads the request, then the close", func() bool { return len(f.log()) == 2 })
	if got := strings.Join(f.log(), ","); got != "ListOffsets,EOF" {
		t.Errorf("the broker read %s, want ListOffsets,EOF", got)
	}
	waitFor(t, "the lost answer recorded", func() bool {
		for _, a := range actions(tap) {
			if a == history.ActionAnswerLost {
				return true
			}
		}
		return false
	})
	if got := actions(tap); got[0] != history.ActionDelayRequests || got[1] != history.ActionHeal {
		t.Errorf("faults %v: want the delay, the heal, then the lost answer", got)
	}
}
