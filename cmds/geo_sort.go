package cmds

// geoPartialSort orders p so that its first k elements are the k smallest by cmp, in order,
// with Redis's pqsort (Bentley and McIlroy's quicksort that skips the partitions outside
// [0, k)): which of several equally distant points come first is its choice, so the same
// algorithm gives the same answer. cmp returns <0, 0 or >0.
func geoPartialSort(p []geoPoint, k int, cmp func(a, b *geoPoint) int) {
	if len(p) == 0 || k <= 0 {
		return
	}
	geoPQSort(p, 0, len(p), cmp, 0, k-1)
}

// geoPQSort sorts p[base:base+n] as far as elements lo..hi (indexes into p) need.
func geoPQSort(p []geoPoint, base, n int, cmp func(a, b *geoPoint) int, lo, hi int) {
	swap := func(i, j int) { p[i], p[j] = p[j], p[i] }
	vecswap := func(i, j, m int) {
		for ; m > 0; m-- {
			swap(i, j)
			i++
			j++
		}
	}
	med3 := func(a, b, c int) int {
		if cmp(&p[a], &p[b]) < 0 {
			if cmp(&p[b], &p[c]) < 0 {
				return b
			}
			if cmp(&p[a], &p[c]) < 0 {
				return c
			}
			return a
		}
		if cmp(&p[b], &p[c]) > 0 {
			return b
		}
		if cmp(&p[a], &p[c]) < 0 {
			return a
		}
		return c
	}
	// outside reports whether the range [s, s+m) holds neither end of lo..hi.
	outside := func(s, m int) bool { return (lo < s && hi < s) || (lo >= s+m && hi >= s+m) }
	for {
		a := base
		if n < 7 { // insertion sort
			for pm := a + 1; pm < a+n; pm++ {
				for pl := pm; pl > a && cmp(&p[pl-1], &p[pl]) > 0; pl-- {
					swap(pl, pl-1)
				}
			}
			return
		}
		pm := a + n/2
		if n > 7 {
			pl, pn := a, a+n-1
			if n > 40 {
				d := n / 8
				pl = med3(pl, pl+d, pl+2*d)
				pm = med3(pm-d, pm, pm+d)
				pn = med3(pn-2*d, pn-d, pn)
			}
			pm = med3(pl, pm, pn)
		}
		swap(a, pm)
		pa, pb := a+1, a+1
		pc, pd := a+n-1, a+n-1
		for {
			for pb <= pc {
				r := cmp(&p[pb], &p[a])
				if r > 0 {
					break
				}
				if r == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				r := cmp(&p[pc], &p[a])
				if r < 0 {
					break
				}
				if r == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		pn := a + n
		r := min(pa-a, pb-pa)
		vecswap(a, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		vecswap(pb, pn-r, r)
		if r = pb - pa; r > 1 && !outside(a, r) {
			geoPQSort(p, a, r, cmp, lo, hi)
		}
		r = pd - pc
		if r <= 1 {
			return
		}
		base, n = pn-r, r
		if outside(base, n) {
			return
		}
	}
}
