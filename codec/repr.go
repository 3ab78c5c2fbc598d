package codec

// AppendRepr appends p quoted as Redis quotes arguments in MONITOR and logs (sdscatrepr):
// "..." with \\ \" \n \r \t \a \b escaped and other non-printable bytes as \xHH.
func AppendRepr(b, p []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range p {
		switch c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if c < 0x20 || c > 0x7e {
				b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}
