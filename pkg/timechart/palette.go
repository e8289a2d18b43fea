// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package timechart

import (
	"math"
	"strconv"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// The palette (see the package documentation).
const (
	CriticalColour = "#A50026"
	ErrorColour    = "#D55E00"
	WarningColour  = "#E69F00"
	InfoColour     = "#0072B2"
	OKColour       = "#009E73"
	UnknownColour  = "#999999"
)

// SeverityColour is the colour of a severity.
func SeverityColour(s catalogue.Severity) string {
	switch s {
	case catalogue.Critical:
		return CriticalColour
	case catalogue.Error:
		return ErrorColour
	case catalogue.Warning:
		return WarningColour
	case catalogue.Info:
		return InfoColour
	}
	return UnknownColour
}

// Ink is the colour of text drawn on fill (#rrggbb): black or white, whichever has the higher
// WCAG contrast ratio with it.
func Ink(fill string) string {
	l, ok := luminance(fill)
	if !ok {
		return "#000"
	}
	if (l+0.05)/0.05 >= 1.05/(l+0.05) {
		return "#000"
	}
	return "#fff"
}

// luminance is the WCAG relative luminance of #rrggbb.
func luminance(hex string) (float64, bool) {
	if len(hex) != 7 || hex[0] != '#' {
		return 0, false
	}
	v, err := strconv.ParseUint(hex[1:], 16, 32)
	if err != nil {
		return 0, false
	}
	lin := func(c uint64) float64 {
		s := float64(c) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(v>>16&0xff) + 0.7152*lin(v>>8&0xff) + 0.0722*lin(v&0xff), true
}
