package logs

// A flat JSON line (klog's or zap's JSON format) of an incident's log differs from the last one
// of its kind only in its "ts" number. A worker keeps, per block, the last flat line of each
// length (modulo flatSlots) with its record; a line whose bytes equal such a line's outside its
// "ts" number, that number being a plain number here too, has the same keys in the same places
// and the same values, so its record is that line's with its own time — without walking its
// keys and unescaping its values again. TestBodyMemo and FuzzBodyMemo compare the records with
// those of the plain path.

const flatSlots = 64

// flatMemo is a worker's; its lines and records borrow the block's bytes and scratch space, so
// it is reset when the block is done.
type flatMemo struct {
	slots [flatSlots]flatLine
}

type flatLine struct {
	line string
	a, b int // line[a:b] is the "ts" number
	rec  Record
	ok   bool
}

func (m *flatMemo) reset() { clear(m.slots[:]) }

// store remembers line, whose "ts" number is line[ts[0]:ts[1]], and its finished record. It
// says whether it did.
func (m *flatMemo) store(line string, ts [2]int, r *Record) bool {
	a, b := ts[0], ts[1]
	if b <= a || b >= len(line) || !isNumber(line[a:b]) || r.Msg == line {
		return false // spaces around the number, or the whole line is the message (it holds the time)
	}
	m.slots[len(line)%flatSlots] = flatLine{line: line, a: a, b: b, rec: *r, ok: true}
	return true
}

// lookup returns the record of line if a remembered line differs from it only in its "ts"
// number, and where that number starts.
func (m *flatMemo) lookup(line string) (Record, int, bool) {
	s := &m.slots[len(line)%flatSlots]
	if !s.ok || len(line) <= s.a || line[:s.a] != s.line[:s.a] {
		return Record{}, 0, false
	}
	e := s.a
	for e < len(line) && isNumberByte(line[e]) {
		e++
	}
	if e == s.a || e == len(line) || line[e:] != s.line[s.b:] {
		return Record{}, 0, false
	}
	t := jsonTime(line[s.a:e])
	if t.IsZero() {
		return Record{}, 0, false // the plain path would look for "time"
	}
	r := s.rec
	r.Time = t.UTC()
	return r, s.a, true
}

func isNumber(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isNumberByte(s[i]) {
			return false
		}
	}
	return true
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'
}
