// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A list in Kubernetes' protobuf encoding is the 4-byte magic "k8s\x00" and a runtime.Unknown
// message whose field 2 (raw) holds the list: field 1 its ListMeta, field 2 each item. decodeList
// reads that from r one item at a time, so that neither the response nor the decoded list is
// ever held whole: each item's bytes are handed to item, valid only during the call.
var protoMagic = []byte{'k', '8', 's', 0}

// maxItem bounds one item's encoding (etcd's default request limit is 1.5 MiB; an object can
// never be larger than what etcd stored, plus the apiserver's additions).
const maxItem = 16 << 20

// Protobuf field numbers and wire types.
const (
	fieldUnknownRaw = 2 // runtime.Unknown.raw
	fieldListMeta   = 1 // <Kind>List.metadata
	fieldListItems  = 2 // <Kind>List.items
	wireVarint      = 0
	wireFixed64     = 1
	wireBytes       = 2
	wireFixed32     = 5
)

// errNotProtobuf: the response is not in the protobuf encoding (a server or proxy that answered
// JSON): the caller reads the list another way.
var errNotProtobuf = errors.New("list response is not protobuf")

func decodeList(r io.Reader, item func([]byte) error) (metav1.ListMeta, error) {
	var lm metav1.ListMeta
	br := bufio.NewReaderSize(r, 64<<10)
	magic := make([]byte, len(protoMagic))
	if _, err := io.ReadFull(br, magic); err != nil || !bytes.Equal(magic, protoMagic) {
		return lm, errNotProtobuf
	}
	// runtime.Unknown: find raw, skip the rest (typeMeta before it; contentEncoding, contentType after).
	top := &limited{br: br, n: math.MaxInt64}
	for {
		field, wire, err := top.tag()
		if err == io.EOF {
			return lm, fmt.Errorf("protobuf list: no raw field")
		}
		if err != nil {
			return lm, err
		}
		if field != fieldUnknownRaw || wire != wireBytes {
			if err := top.skip(wire); err != nil {
				return lm, err
			}
			continue
		}
		size, err := binary.ReadUvarint(top)
		if err != nil {
			return lm, fmt.Errorf("protobuf list: %w", err)
		}
		return lm, walkList(&limited{br: br, n: int64(size)}, &lm, item)
	}
}

// walkList reads a <Kind>List message's fields from raw.
func walkList(raw *limited, lm *metav1.ListMeta, item func([]byte) error) error {
	var buf []byte
	for raw.n > 0 {
		field, wire, err := raw.tag()
		if err != nil {
			return err
		}
		if wire != wireBytes || field != fieldListMeta && field != fieldListItems {
			if err := raw.skip(wire); err != nil {
				return err
			}
			continue
		}
		if buf, err = raw.bytes(buf); err != nil {
			return err
		}
		if field == fieldListMeta {
			if err := lm.Unmarshal(buf); err != nil {
				return fmt.Errorf("protobuf list metadata: %w", err)
			}
			continue
		}
		if err := item(buf); err != nil {
			return err
		}
	}
	return nil
}

// limited reads at most n more bytes of br.
type limited struct {
	br *bufio.Reader
	n  int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.br.Read(p)
	l.n -= int64(k)
	return k, err
}

func (l *limited) ReadByte() (byte, error) {
	if l.n <= 0 {
		return 0, io.EOF
	}
	b, err := l.br.ReadByte()
	if err == nil {
		l.n--
	}
	return b, err
}

func (l *limited) tag() (field, wire int, err error) {
	v, err := binary.ReadUvarint(l)
	if err != nil {
		return 0, 0, err
	}
	return int(v >> 3), int(v & 7), nil
}

// bytes reads a length-delimited field's content into buf (grown as needed).
func (l *limited) bytes(buf []byte) ([]byte, error) {
	size, err := binary.ReadUvarint(l)
	if err != nil {
		return buf, fmt.Errorf("protobuf list: %w", err)
	}
	if size > maxItem {
		return buf, fmt.Errorf("protobuf list: an item of %d bytes", size)
	}
	if uint64(cap(buf)) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	if _, err := io.ReadFull(l, buf); err != nil {
		return buf, fmt.Errorf("protobuf list: %w", err)
	}
	return buf, nil
}

// skip reads past one field's value.
func (l *limited) skip(wire int) error {
	var n uint64
	switch wire {
	case wireVarint:
		_, err := binary.ReadUvarint(l)
		return err
	case wireFixed64:
		n = 8
	case wireFixed32:
		n = 4
	case wireBytes:
		size, err := binary.ReadUvarint(l)
		if err != nil {
			return err
		}
		n = size
	default:
		return fmt.Errorf("protobuf list: wire type %d", wire)
	}
	if _, err := io.CopyN(io.Discard, l, int64(n)); err != nil {
		return fmt.Errorf("protobuf list: %w", err)
	}
	return nil
}
