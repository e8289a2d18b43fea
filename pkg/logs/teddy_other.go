//go:build !amd64

package logs

const teddyAVX2 = false

func teddyScan(*teddyMasks, []byte, []uint64) (n, next int, nul bool) { panic("teddyScan needs amd64") }
