// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package strictjson checks JSON text more strictly than encoding/json: one value, no duplicate
// object keys (encoding/json keeps the last one silently, go-jose's decoder rejects them), and a
// bounded nesting depth. Token and JWKS parsers run it before decoding untrusted input.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxDepth bounds object/array nesting.
const MaxDepth = 64

// DuplicateKeyError names a key that occurs twice in one object.
type DuplicateKeyError struct {
	Key string
}

func (e *DuplicateKeyError) Error() string { return fmt.Sprintf("duplicate JSON key %q", e.Key) }

// Check returns an error if data is not exactly one JSON value, repeats a key within an
// object, or nests deeper than MaxDepth.
func Check(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := value(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("invalid JSON: data after the top-level value")
	}
	return nil
}

func value(dec *json.Decoder, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("invalid JSON: nested deeper than %d", MaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return syntax(err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return syntax(err)
			}
			k, ok := kt.(string)
			if !ok {
				return errors.New("invalid JSON: object key is not a string")
			}
			if seen[k] {
				return &DuplicateKeyError{Key: k}
			}
			seen[k] = true
			if err := value(dec, depth+1); err != nil {
				return err
			}
		}
	case '[':
		for dec.More() {
			if err := value(dec, depth+1); err != nil {
				return err
			}
		}
	default:
		return errors.New("invalid JSON: unexpected delimiter")
	}
	if _, err := dec.Token(); err != nil { // closing delimiter
		return syntax(err)
	}
	return nil
}

func syntax(err error) error {
	if errors.Is(err, io.EOF) {
		return errors.New("invalid JSON: unexpected end of input")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}
