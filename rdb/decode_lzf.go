package rdb

// lzfMaxRatio bounds how much LZF can expand: a 3-byte back reference yields at most 264
// bytes. A claimed uncompressed length beyond it cannot be honest, so it is refused before
// anything that size is allocated.
const lzfMaxRatio = 88

// lzfDecompress expands src (LZF, as Redis's lzf_compress writes it) into dst, whose
// length is the uncompressed length the file claims; it fails unless src fills dst exactly.
func lzfDecompress(dst, src []byte) error {
	ip, op := 0, 0
	for ip < len(src) {
		ctrl := int(src[ip])
		ip++
		if ctrl < 32 { // a run of ctrl+1 literal bytes
			n := ctrl + 1
			if ip+n > len(src) || op+n > len(dst) {
				return ErrBadFormat
			}
			copy(dst[op:], src[ip:ip+n])
			ip += n
			op += n
			continue
		}
		// A back reference: length (ctrl>>5)+2, extended by a byte when the 3 bits are all set;
		// distance ((ctrl&31)<<8 | next byte) + 1 back from the output position.
		n := ctrl >> 5
		if ip >= len(src) {
			return ErrBadFormat
		}
		if n == 7 {
			n += int(src[ip])
			ip++
			if ip >= len(src) {
				return ErrBadFormat
			}
		}
		ref := op - ((ctrl&31)<<8 | int(src[ip])) - 1
		ip++
		n += 2
		if ref < 0 || op+n > len(dst) {
			return ErrBadFormat
		}
		for i := 0; i < n; i++ { // byte by byte: the areas may overlap
			dst[op+i] = dst[ref+i]
		}
		op += n
	}
	if op != len(dst) {
		return ErrBadFormat
	}
	return nil
}
