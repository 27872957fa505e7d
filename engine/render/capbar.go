package render

import (
	"strings"

	"github.com/gpuform/gpuform/engine/capacity"
)

// capacityBarWidth is the cells of a capacity bar.
const capacityBarWidth = 20

// capacityLegend explains the cells of a capacity bar.
const capacityLegend = "# requested by models, + quota not requested, . free, ! beyond the pool's limit"

// CapacityBar draws a pool's quota against its capacity: width cells over
// the largest of capacity, quota and requests; '#' what models request,
// '+' the rest of the tenants' quotas, '.' capacity no quota claims, '!'
// quota or requests beyond the limit (capacity x overcommit), ' ' beyond
// the capacity. E.g. "[######++++++........]" for 6 requested, 12 of
// quota, 20 of capacity.
func CapacityBar(r capacity.Row, width int) string {
	limit := max(r.Limit, r.Total)
	scale := max(r.Total, r.Quota, r.Requested, limit, 1)
	// cells is how many cells n takes, at least one when n > 0.
	cells := func(n int) int {
		if n <= 0 {
			return 0
		}
		return max(1, (n*width+scale/2)/scale)
	}
	requested := cells(r.Requested)
	claimed := max(cells(max(r.Quota, r.Requested)), requested)
	total, lim := cells(r.Total), cells(limit)
	var b strings.Builder
	b.WriteByte('[')
	for i := range width {
		c := byte(' ')
		switch {
		case i < requested:
			c = '#'
		case i < claimed:
			c = '+'
		case i < total:
			c = '.'
		}
		if (c == '#' || c == '+') && i >= lim {
			c = '!'
		}
		b.WriteByte(c)
	}
	b.WriteByte(']')
	return b.String()
}

// bar is the capacity bar of the pair's head row, "-" for a removed one.
func (c capacityPair) bar() string {
	if c.head == nil {
		return "-"
	}
	return CapacityBar(*c.head, capacityBarWidth)
}
