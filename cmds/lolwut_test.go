package cmds_test

import (
	"strings"
	"testing"

	"shardis/internal/testserver"
)

// LOLWUT's deterministic outputs (the default version line, and version 5 with at most two
// rows of squares, which Redis draws without rand()) byte for byte as redis-server 7.0.15's,
// its errors, COMMAND INFO and DOCS.
func TestLolwut_FixedOutputs_AsRedis(t *testing.T) { replayRecorded(t, "testdata/lolwut") }

// Version 5 and 6 with their random parts: Redis's layout (lines, widths, the closing text).
func TestLolwut_RandomVersions_Layout(t *testing.T) {
	c := connDial(t, testserver.Start(t).Addr)
	for _, tc := range []struct {
		args      []string
		lines     int
		lineBytes int
		tail      string
	}{
		// 66 columns of braille (3 bytes each), 12 rows of squares of 16 pixels: 49 lines.
		{[]string{"LOLWUT", "VERSION", "5"}, 49, 66 * 3, "Georg Nees - schotter, plotter on paper, 1968. Redis ver. 7.0.15"},
		{[]string{"LOLWUT", "VERSION", "6", "10", "5"}, 5, 10 * len("\033[0;30;40m \033[0m"), "Original 8 bit image from Plaguemon by hikikomori. Redis ver. 7.0.15"},
	} {
		c.cmd(tc.args...)
		reply := c.bulk()
		lines := strings.Split(strings.TrimSuffix(reply, "\n"), "\n")
		if last := lines[len(lines)-1]; last != tc.tail {
			t.Errorf("%v: last line %q", tc.args, last)
		}
		if len(lines) < tc.lines {
			t.Fatalf("%v: %d lines", tc.args, len(lines))
		}
		for i, l := range lines[:tc.lines] {
			if tc.args[2] == "5" && len(l) != tc.lineBytes {
				t.Errorf("%v: line %d is %d bytes", tc.args, i, len(l))
			}
			if tc.args[2] == "6" && strings.Count(l, " \033[0m") != 10 {
				t.Errorf("%v: line %d is %q", tc.args, i, l)
			}
		}
	}
}
