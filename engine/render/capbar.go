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
	claimed := max(r.Quota, r.Requested)
	var b strings.Builder
	b.WriteByte('[')
	for i := range width {
		// The value at the middle of cell i.
		v := (float64(i) + 0.5) * float64(scale) / float64(width)
		c := byte(' ')
		switch {
		case v < float64(r.Requested):
			c = '#'
		case v < float64(claimed):
			c = '+'
		case v < float64(r.Total):
			c = '.'
		}
		if c != ' ' && c != '.' && v >= float64(limit) {
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
