// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package timechart draws a chart over time as inline SVG for credwatch's self-contained HTML
// pages: labelled rows on one time axis (UTC), each holding spans (a status that lasted, as watch's
// member lanes) and marks (a count at an instant, as logs' lines per minute), under a legend.
// `credwatch watch --report` and `credwatch logs --html` both draw with it.
//
// # Palette
//
// Colours say severity, the catalogue's (pkg/catalogue), and nothing else:
//
//	critical  #A50026  dark red
//	error     #D55E00  vermillion
//	warning   #E69F00  orange (amber)
//	info      #0072B2  blue
//	ok        #009E73  bluish green (a ready member; never a finding)
//	unknown   #999999  grey (a severity the catalogue does not name)
//
// Error, warning, info and ok are Okabe and Ito's colours for colour-blind readers ("Color
// Universal Design", 2008): they stay apart under protanopia, deuteranopia and tritanopia.
// Critical is a darker red that differs from error in lightness, so the two stay apart in grey
// too. No colour carries the meaning alone: every chart has a legend, marks differ in shape
// where rows differ in kind, and every span and mark has a tooltip that names its severity.
// Text drawn on a colour is black or white, whichever contrasts more (Ink).
//
// Everything the chart writes goes through package markup, escaped; labels and tooltips are
// redacted by the caller before they reach a Chart, as for the rest of a page.
package timechart
