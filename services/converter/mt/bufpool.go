package mt

import "sync"

// bufPool keeps the renderers' byte buffers between conversions. A render
// copies what it wrote into its pages (strings), so a buffer is free again
// when the render returns; allocating a fresh one per message was a third
// of the bytes a conversion allocated, and so of the collector's work.
var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, minPooledBuf)
	return &b
}}

const (
	// minPooledBuf holds a FIN message and the statement renderer's four
	// buffers (render.go).
	minPooledBuf = 4096
	// maxPooledBuf: a buffer grown past this for a large statement is left
	// to the collector rather than kept.
	maxPooledBuf = 64 << 10
)

func getBuf() *[]byte {
	pb := bufPool.Get().(*[]byte)
	if cap(*pb) < minPooledBuf {
		*pb = make([]byte, 0, minPooledBuf)
	}
	return pb
}

func putBuf(pb *[]byte) {
	if cap(*pb) > maxPooledBuf {
		return
	}
	*pb = (*pb)[:0]
	bufPool.Put(pb)
}
