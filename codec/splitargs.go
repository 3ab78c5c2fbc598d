package codec

// SplitArgs splits line as Redis's sdssplitargs does (the rules of an inline request: quotes,
// escapes, a quote opening in the middle of an argument); ok is false for unbalanced quotes.
func SplitArgs(line string) (args []string, ok bool) {
	parts, ok := splitArgs([]byte(line), nil)
	if !ok {
		return nil, false
	}
	args = make([]string, len(parts))
	for i, p := range parts {
		args[i] = string(p)
	}
	return args, true
}
