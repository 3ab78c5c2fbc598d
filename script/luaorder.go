package script

import (
	"iter"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's table order. Redis's cmsgpack.pack and cjson.encode write a map's keys in the
// order lua_next gives them: the array part, then the hash part's nodes, where a key's node
// follows from its hash, the table's size and the keys inserted before it. gopher-lua keeps
// keys in insertion order instead. luaOrder replays a table's keys, in gopher-lua's order,
// into a model of Lua 5.1's table (ltable.c: newkey, rehash, resize, computesizes) grown one
// insertion at a time, as a table built by t[k] = v assignments grows, and returns them in
// that model's order. Strings (luaS_hash), numbers (hashnum) and booleans hash as in Lua 5.1;
// a table with keys of another type (tables, functions, whose hashes are addresses) keeps
// gopher-lua's order. What the replay cannot know: keys deleted before (they leave dead
// nodes in Lua), and a table constructor's presized hash part ({a=1, b=2}), which can place
// keys differently from growth by insertion once there are more than a few.

const luaMaxBits = 26 // Lua 5.1's MAXBITS: the array part holds keys up to 2^26

type l51Node struct {
	key  lua.LValue // nil: free
	next int        // chain, -1 for none
}

type l51Table struct {
	arr      []bool // array part: which of 1..len(arr) are present
	node     []l51Node
	lastfree int
}

// luaOrder returns t's keys in Lua 5.1's lua_next order (see above), or ok false when a key
// has no Lua 5.1 hash the model can compute.
func luaOrder(t *lua.LTable) (keys []lua.LValue, ok bool) {
	m := &l51Table{}
	n := 0
	for k := range tableKeys(t) {
		switch k.(type) {
		case lua.LString, lua.LNumber, lua.LBool:
		default:
			return nil, false
		}
		m.set(k)
		n++
	}
	keys = make([]lua.LValue, 0, n)
	for i, present := range m.arr {
		if present {
			keys = append(keys, lua.LNumber(i+1))
		}
	}
	for _, nd := range m.node {
		if nd.key != nil {
			keys = append(keys, nd.key)
		}
	}
	return keys, true
}

// arrayIndex returns k as an array index (1..2^26) when it is one.
func arrayIndex(k lua.LValue) (int, bool) {
	n, ok := k.(lua.LNumber)
	if !ok {
		return 0, false
	}
	f := float64(n)
	if f != math.Trunc(f) || f < 1 || f > 1<<luaMaxBits {
		return 0, false
	}
	return int(f), true
}

func ceilLog2(x int) int {
	l := 0
	for 1<<l < x {
		l++
	}
	return l
}

func luaStringHash(s string) uint32 {
	l := len(s)
	h := uint32(l)
	step := (l >> 5) + 1
	for l1 := l; l1 >= step; l1 -= step {
		h ^= (h << 5) + (h >> 2) + uint32(s[l1-1])
	}
	return h
}

// mainPos is Lua 5.1's mainposition for a table of len(m.node) nodes (a power of two).
func (m *l51Table) mainPos(k lua.LValue) int {
	size := len(m.node)
	switch k := k.(type) {
	case lua.LString:
		return int(luaStringHash(string(k)) & uint32(size-1))
	case lua.LBool:
		b := 0
		if k {
			b = 1
		}
		return b & (size - 1)
	case lua.LNumber:
		if k == 0 {
			return 0
		}
		bits := math.Float64bits(float64(k))
		a := uint32(bits) + uint32(bits>>32)
		return int(a % uint32((size-1)|1))
	}
	return 0
}

func (m *l51Table) set(k lua.LValue) {
	if i, ok := arrayIndex(k); ok && i <= len(m.arr) {
		m.arr[i-1] = true
		return
	}
	if len(m.node) > 0 {
		for i := m.mainPos(k); i >= 0; i = m.node[i].next {
			if m.node[i].key == k {
				return
			}
		}
	}
	m.newKey(k)
}

func (m *l51Table) freePos() int {
	for m.lastfree > 0 {
		m.lastfree--
		if m.node[m.lastfree].key == nil {
			return m.lastfree
		}
	}
	return -1
}

func (m *l51Table) newKey(k lua.LValue) {
	if len(m.node) == 0 { // the dummy node: grow
		m.rehash(k)
		m.set(k)
		return
	}
	mp := m.mainPos(k)
	if m.node[mp].key != nil {
		n := m.freePos()
		if n < 0 {
			m.rehash(k)
			m.set(k)
			return
		}
		other := m.mainPos(m.node[mp].key)
		if other != mp { // the colliding node is out of its main position: move it
			for m.node[other].next != mp {
				other = m.node[other].next
			}
			m.node[other].next = n
			m.node[n] = m.node[mp]
			m.node[mp] = l51Node{next: -1}
		} else { // the new key goes to the free position
			m.node[n].next = m.node[mp].next
			m.node[mp].next = n
			mp = n
		}
	}
	m.node[mp].key = k
}

func countInt(k lua.LValue, nums []int) int {
	if i, ok := arrayIndex(k); ok {
		nums[ceilLog2(i)]++
		return 1
	}
	return 0
}

func (m *l51Table) rehash(extra lua.LValue) {
	nums := make([]int, luaMaxBits+1)
	nasize := 0
	for i, present := range m.arr {
		if present {
			nums[ceilLog2(i+1)]++
			nasize++
		}
	}
	total := nasize
	for _, nd := range m.node {
		if nd.key != nil {
			nasize += countInt(nd.key, nums)
			total++
		}
	}
	nasize += countInt(extra, nums)
	total++
	na := computeSizes(nums, &nasize)
	m.resize(nasize, total-na)
}

func computeSizes(nums []int, narray *int) int {
	a, na, n := 0, 0, 0
	for i, twotoi := 0, 1; twotoi/2 < *narray; i, twotoi = i+1, twotoi*2 {
		if nums[i] > 0 {
			a += nums[i]
			if a > twotoi/2 {
				n, na = twotoi, a
			}
		}
		if a == *narray {
			break
		}
	}
	*narray = n
	return na
}

func (m *l51Table) resize(nasize, nhsize int) {
	oldArr, oldNodes := m.arr, m.node
	if nasize > len(oldArr) {
		m.arr = append(m.arr, make([]bool, nasize-len(oldArr))...)
	}
	m.node = nil
	if nhsize > 0 {
		m.node = make([]l51Node, 1<<ceilLog2(nhsize))
		for i := range m.node {
			m.node[i].next = -1
		}
	}
	m.lastfree = len(m.node)
	if nasize < len(oldArr) {
		m.arr = append([]bool(nil), oldArr[:nasize]...)
		for i := nasize; i < len(oldArr); i++ {
			if oldArr[i] {
				m.set(lua.LNumber(i + 1))
			}
		}
	}
	for i := len(oldNodes) - 1; i >= 0; i-- {
		if oldNodes[i].key != nil {
			m.set(oldNodes[i].key)
		}
	}
}

// tableKeys yields t's keys in gopher-lua's next order (array part, then insertion order).
func tableKeys(t *lua.LTable) iter.Seq[lua.LValue] {
	return func(yield func(lua.LValue) bool) {
		for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
			if !yield(k) {
				return
			}
		}
	}
}
