package cmds

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"shardis/codec"
)

// LOLWUT as Redis 7.0 has it: LOLWUT [VERSION v] [args]. Version 5 draws Georg Nees's
// Schotter in braille characters, version 6 a skyline in terminal grays, and any other
// version (7, Redis 7.0's own, is the default) only the version line. The drawing is Redis's
// algorithm (lolwut.c, lolwut5.c, lolwut6.c) with its float arithmetic; the random parts use
// Go's generator where Redis uses rand(), so they differ from run to run as Redis's do.

func init() {
	Register(&Command{Name: "lolwut", Arity: -1, Flags: []string{"readonly", "fast"},
		ACL: []string{"read", "fast"}, Group: "server", Since: "5.0.0",
		Summary: "Display some computer art and the Redis version", Syntax: "[VERSION version]",
		Exec: ExecConn, Run: lolwut})
}

func lolwut(c *Ctx) {
	args := c.Args[1:]
	v := RedisVersion
	if len(args) >= 2 && EqualFold(args[0], "version") {
		n, ok := c.IntArg(2)
		if !ok {
			return
		}
		v = fmt.Sprintf("%d.0.0", uint32(n))
		args = args[2:]
	}
	switch {
	case v[0] == '5' && v[1] == '.' && v[2] != '9', v[0] == '4' && v[1] == '.' && v[2] == '9':
		lolwut5(c, args)
	case v[0] == '6' && v[1] == '.' && v[2] != '9', v[0] == '5' && v[1] == '.' && v[2] == '9':
		lolwut6(c, args)
	default:
		c.W.Verbatim("txt", "Redis ver. "+RedisVersion+"\n")
	}
}

// lolwutArgs parses up to len(vals) integer arguments into vals (Redis's getLongFromObject);
// false once it replied an error.
func lolwutArgs(c *Ctx, args [][]byte, vals ...*int64) bool {
	for i, p := range vals {
		if i >= len(args) {
			break
		}
		n, ok := codec.ParseInt(args[i])
		if !ok {
			c.Error(ErrNotInt)
			return false
		}
		*p = n
	}
	return true
}

func clampInt(v, lo, hi int64) int {
	return int(max(lo, min(hi, v)))
}

// lwCanvas is Redis's lwCanvas: a grid of pixels, each a color.
type lwCanvas struct {
	width, height int
	pixels        []byte
}

func newCanvas(width, height int, bg byte) *lwCanvas {
	cv := &lwCanvas{width: width, height: height, pixels: make([]byte, width*height)}
	for i := range cv.pixels {
		cv.pixels[i] = bg
	}
	return cv
}

func (cv *lwCanvas) set(x, y int, color byte) {
	if x < 0 || x >= cv.width || y < 0 || y >= cv.height {
		return
	}
	cv.pixels[x+y*cv.width] = color
}

func (cv *lwCanvas) get(x, y int) byte {
	if x < 0 || x >= cv.width || y < 0 || y >= cv.height {
		return 0
	}
	return cv.pixels[x+y*cv.width]
}

// line is Bresenham's, as lwDrawLine.
func (cv *lwCanvas) line(x1, y1, x2, y2 int, color byte) {
	dx, dy := x2-x1, y2-y1
	if dx < 0 {
		dx = -dx
	}
	if dy < 0 {
		dy = -dy
	}
	sx, sy := -1, -1
	if x1 < x2 {
		sx = 1
	}
	if y1 < y2 {
		sy = 1
	}
	err := dx - dy
	for {
		cv.set(x1, y1, color)
		if x1 == x2 && y1 == y2 {
			break
		}
		e2 := err * 2
		if e2 > -dy {
			err -= dy
			x1 += sx
		}
		if e2 < dx {
			err += dx
			y1 += sy
		}
	}
}

// square is lwDrawSquare, with C's float (float32) variables.
func (cv *lwCanvas) square(x, y int, size, angle float32, color byte) {
	size = float32(float64(size) / 1.4142135623)
	size = float32(math.Round(float64(size)))
	var px, py [4]int
	k := float32(math.Pi/4 + float64(angle))
	for j := 0; j < 4; j++ {
		px[j] = int(math.Round(math.Sin(float64(k))*float64(size) + float64(x)))
		py[j] = int(math.Round(math.Cos(float64(k))*float64(size) + float64(y)))
		k = float32(float64(k) + math.Pi/2)
	}
	for j := 0; j < 4; j++ {
		cv.line(px[j], py[j], px[(j+1)%4], py[(j+1)%4], color)
	}
}

// crand is C's rand(): a number in [0, RAND_MAX].
func crand() int32 { return rand.Int32() }

const cRandMax = math.MaxInt32

func lolwut5(c *Ctx, args [][]byte) {
	cols, perRow, perCol := int64(66), int64(8), int64(12)
	if !lolwutArgs(c, args, &cols, &perRow, &perCol) {
		return
	}
	cv := schotter(clampInt(cols, 1, 1000), clampInt(perRow, 1, 200), clampInt(perCol, 1, 200))
	var b strings.Builder
	for y := 0; y < cv.height; y += 4 {
		for x := 0; x < cv.width; x += 2 {
			var bits int
			for i, p := range [8][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}} {
				if cv.get(x+p[0], y+p[1]) != 0 {
					bits |= 1 << i
				}
			}
			b.WriteRune(rune(0x2800 + bits))
		}
		if y != cv.height-1 {
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. " + RedisVersion + "\n")
	c.W.Verbatim("txt", b.String())
}

// schotter is lwDrawSchotter.
func schotter(cols, perRow, perCol int) *lwCanvas {
	width := cols * 2
	padding := 0
	if width > 4 {
		padding = 2
	}
	side := float32(width-padding*2) / float32(perRow)
	height := int(side*float32(perCol) + float32(padding*2))
	cv := newCanvas(width, height, 0)
	for y := 0; y < perCol; y++ {
		for x := 0; x < perRow; x++ {
			sx := int(float32(x)*side + side/2 + float32(padding))
			sy := int(float32(y)*side + side/2 + float32(padding))
			var angle float32
			if y > 1 {
				r1 := float32(crand()) / float32(cRandMax) / float32(perCol) * float32(y)
				r2 := float32(crand()) / float32(cRandMax) / float32(perCol) * float32(y)
				r3 := float32(crand()) / float32(cRandMax) / float32(perCol) * float32(y)
				if crand()%2 != 0 {
					r1 = -r1
				}
				if crand()%2 != 0 {
					r2 = -r2
				}
				if crand()%2 != 0 {
					r3 = -r3
				}
				angle = r1
				sx = int(float32(sx) + r2*side/3)
				sy = int(float32(sy) + r3*side/3)
			}
			cv.square(sx, sy, side, angle, 1)
		}
	}
	return cv
}

func lolwut6(c *Ctx, args [][]byte) {
	cols, rows := int64(80), int64(20)
	if !lolwutArgs(c, args, &cols, &rows) {
		return
	}
	cv := newCanvas(clampInt(cols, 1, 1000), clampInt(rows, 1, 1000), 3)
	skyline(cv)
	var b strings.Builder
	for y := 0; y < cv.height; y++ {
		for x := 0; x < cv.width; x++ {
			ce := "0;30;40m"
			switch cv.get(x, y) {
			case 1:
				ce = "0;90;100m"
			case 2:
				ce = "0;37;47m"
			case 3:
				ce = "0;97;107m"
			}
			b.WriteString("\033[" + ce + " \033[0m")
		}
		if y != cv.height-1 {
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nDedicated to the 8 bit game developers of past and present.\n" +
		"Original 8 bit image from Plaguemon by hikikomori. Redis ver. " + RedisVersion + "\n")
	c.W.Verbatim("txt", b.String())
}

type skyscraper struct {
	xoff, width, height int
	windows             bool
	color               byte
}

// building is generateSkyscraper.
func (cv *lwCanvas) building(si skyscraper) {
	starty := cv.height - 1
	endy := starty - si.height + 1
	for y := starty; y >= endy; y-- {
		for x := si.xoff; x < si.xoff+si.width; x++ {
			if y == endy && (x <= si.xoff+1 || x >= si.xoff+si.width-2) {
				continue // the roof is four pixels narrower
			}
			color := si.color
			if si.windows && x > si.xoff+1 && x < si.xoff+si.width-2 && y > endy+1 && y < starty-1 {
				relx, rely := x-(si.xoff+1), y-(endy+1)
				if relx/2%2 != 0 && rely%2 != 0 {
					for {
						color = byte(1 + crand()%2)
						if color != si.color {
							break
						}
					}
					if relx%2 != 0 {
						color = cv.get(x-1, y)
					}
				}
			}
			cv.set(x, y, color)
		}
	}
}

// skyline is generateSkyline.
func skyline(cv *lwCanvas) {
	h := int32(cv.height)
	for color := byte(2); color >= 1; color-- {
		for offset := -10; offset < cv.width; {
			offset += int(crand() % 8)
			si := skyscraper{xoff: offset, width: 10 + int(crand()%9), color: color}
			// C's rand()%canvas->height/2 is (rand()%height)/2.
			if color == 2 {
				si.height = int(h/2 + crand()%h/2)
			} else {
				si.height = int(h/2 + crand()%h/3)
			}
			cv.building(si)
			if color == 2 {
				offset += si.width / 2
			} else {
				offset += si.width + 1
			}
		}
	}
	for offset := -10; offset < cv.width; {
		offset += int(crand() % 8)
		si := skyscraper{xoff: offset, width: 5 + int(crand()%14), windows: true}
		if si.width%4 != 0 {
			si.width += si.width % 3
		}
		si.height = int(h/3 + crand()%h/2)
		cv.building(si)
		offset += si.width + 5
	}
}
