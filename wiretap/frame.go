package wiretap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxFrame bounds a frame the tap accepts; Kafka's own default for
// socket.request.max.bytes is 100 MiB.
const maxFrame = 100 << 20

// readFrame reads one size-prefixed Kafka frame and returns its body.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 0 || n > maxFrame {
		return nil, fmt.Errorf("frame size %d out of range", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("truncated frame: %w", err)
	}
	return body, nil
}

// frame prefixes body with its size.
func frame(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// requestHeader is the part of a request header the tap needs.
type requestHeader struct {
	key, version int16
	correlation  int32
	clientID     *string
	// bodyAt is where the request body starts in the frame.
	bodyAt int
}

var errShort = errors.New("header cut short")

// parseRequestHeader reads a request header (v1, or v2 with tagged fields
// for flexible versions, which kmsg knows per key and version).
func parseRequestHeader(b []byte) (requestHeader, error) {
	var h requestHeader
	if len(b) < 10 {
		return h, errShort
	}
	h.key = int16(binary.BigEndian.Uint16(b))
	h.version = int16(binary.BigEndian.Uint16(b[2:]))
	h.correlation = int32(binary.BigEndian.Uint32(b[4:]))
	n := int16(binary.BigEndian.Uint16(b[8:]))
	at := 10
	if n >= 0 {
		if len(b) < at+int(n) {
			return h, errShort
		}
		id := string(b[at : at+int(n)])
		h.clientID = &id
		at += int(n)
	}
	if req := kmsg.RequestForKey(h.key); req != nil {
		req.SetVersion(h.version)
		if req.IsFlexible() {
			end, err := skipTags(b, at)
			if err != nil {
				return h, err
			}
			at = end
		}
	}
	h.bodyAt = at
	return h, nil
}

// responseBodyAt returns where a response body starts: after the
// correlation id, and the header's tagged fields for flexible responses
// (ApiVersions always uses header v0).
func responseBodyAt(b []byte, key, version int16) (int, error) {
	if len(b) < 4 {
		return 0, errShort
	}
	req := kmsg.RequestForKey(key)
	if req == nil || key == int16(kmsg.ApiVersions) {
		return 4, nil
	}
	req.SetVersion(version)
	if !req.IsFlexible() {
		return 4, nil
	}
	return skipTags(b, 4)
}

// skipTags skips a tagged-field section starting at at.
func skipTags(b []byte, at int) (int, error) {
	n, used := binary.Uvarint(b[at:])
	if used <= 0 {
		return 0, errShort
	}
	at += used
	for range n {
		_, u1 := binary.Uvarint(b[at:])
		if u1 <= 0 {
			return 0, errShort
		}
		at += u1
		size, u2 := binary.Uvarint(b[at:])
		if u2 <= 0 || at+u2+int(size) > len(b) {
			return 0, errShort
		}
		at += u2 + int(size)
	}
	return at, nil
}

// responseFrame builds a response frame: correlation id, header tags when
// flexible, then the encoded body.
func responseFrame(correlation int32, resp kmsg.Response) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(correlation))
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		b = append(b, 0) // no header tags
	}
	return frame(resp.AppendTo(b))
}
