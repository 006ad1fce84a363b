package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// maxDepth bounds nesting in decoded msgpack, as encoding/json does for JSON.
const maxDepth = 200

// eventTime is the Fluent Bit / Fluentd EventTime: msgpack ext type 0, 8 bytes,
// big-endian uint32 seconds then uint32 nanoseconds.
type eventTime struct{ sec, nsec uint32 }

// decodeMsgpack decodes concatenated msgpack values, one record each. msgpack cannot
// resynchronise, so a corrupt value rejects the rest of the body.
func decodeMsgpack(b *batch, p *profile) error {
	r := bytes.NewReader(b.req.Body)
	m := &mpReader{d: msgpack.NewDecoder(r), r: r}
	decoded := 0
	for r.Len() > 0 {
		v, err := m.value(0)
		if err != nil {
			if decoded == 0 {
				return fmt.Errorf("msgpack: %w", err)
			}
			b.reject("msgpack: %v", err)
			return nil
		}
		decoded++
		if err := b.addMsgpackRecord(v, p); err != nil {
			return err
		}
	}
	return nil
}

// mpReader decodes msgpack into map[string]any, []any and scalars, reading EventTime
// extensions itself so that no global extension registry is involved, and never
// allocating for a length prefix more than the bytes that remain.
type mpReader struct {
	d *msgpack.Decoder
	r *bytes.Reader
}

var errDepth = errors.New("nesting too deep")

func (m *mpReader) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	c, err := m.d.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		return m.mapValue(depth)
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		return m.arrayValue(depth)
	case msgpcode.IsExt(c):
		return m.extValue()
	}
	return m.d.DecodeInterfaceLoose()
}

func (m *mpReader) mapValue(depth int) (any, error) {
	n, err := m.d.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, err
	}
	if n > m.r.Len()/2 {
		return nil, io.ErrUnexpectedEOF
	}
	out := make(map[string]any, n)
	for range n {
		k, err := m.value(depth + 1)
		if err != nil {
			return nil, err
		}
		key, ok := scalarString(k)
		if !ok {
			return nil, fmt.Errorf("map key is %s", kindOf(k))
		}
		v, err := m.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

func (m *mpReader) arrayValue(depth int) (any, error) {
	n, err := m.d.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	if n > m.r.Len() {
		return nil, io.ErrUnexpectedEOF
	}
	out := make([]any, 0, n)
	for range n {
		v, err := m.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// extValue reads an extension: EventTime for type 0 with 8 bytes, nil for any other.
func (m *mpReader) extValue() (any, error) {
	id, n, err := m.d.DecodeExtHeader()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > m.r.Len() {
		return nil, io.ErrUnexpectedEOF
	}
	buf := make([]byte, n)
	if err := m.d.ReadFull(buf); err != nil {
		return nil, err
	}
	if id != 0 || n != 8 {
		return nil, nil
	}
	sec := uint32(buf[0])<<24 | uint32(buf[1])<<16 | uint32(buf[2])<<8 | uint32(buf[3])
	nsec := uint32(buf[4])<<24 | uint32(buf[5])<<16 | uint32(buf[6])<<8 | uint32(buf[7])
	return eventTime{sec: sec, nsec: nsec}, nil
}
