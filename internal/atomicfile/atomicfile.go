// Package atomicfile replaces files so that a crash leaves either the old content or the new.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
)

// Replace writes content to a temporary file beside path, syncs it and renames it over path.
// The new file keeps the old one's permissions (0644 when there was none); the temporary file
// is removed on any error.
func Replace(path, content string) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(content)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	// OpenFile's mode passes through the umask; the old file's permissions are kept exactly.
	if err := os.Chmod(tmp, mode); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}
