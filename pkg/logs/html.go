package logs

import "io"

// WriteHTML writes a self-contained page.
func (r *Report) WriteHTML(w io.Writer) error { return nil }
