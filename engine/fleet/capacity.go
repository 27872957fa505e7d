package fleet

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/render"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// Grants is what cfg's quotas give each tenant: by tenant, by pool, as
// "4 GPUs" or "2 x 3g.40gb". A nil cfg gives nothing.
func Grants(cfg *config.Config) map[string]map[string]string {
	out := map[string]map[string]string{}
	if cfg == nil {
		return out
	}
	for _, t := range cfg.Tenants {
		byPool := map[string]string{}
		for _, q := range t.Quotas {
			var parts []string
			if q.GPUs > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", q.GPUs, render.PluralWord(q.GPUs, "GPU", "GPUs")))
			}
			for _, s := range slices.Sorted(maps.Keys(q.Slices)) {
				parts = append(parts, fmt.Sprintf("%d x %s", q.Slices[s], s))
			}
			if len(parts) == 0 {
				parts = append(parts, "0 GPUs")
			}
			byPool[q.PoolName] = strings.Join(parts, ", ")
		}
		out[t.Name] = byPool
	}
	return out
}

// CapacityMember is one member's configurations for the capacity table:
// at the base (nil: none) and with the change.
type CapacityMember struct {
	Cluster       string
	Before, After *config.Config
}

// CapacityRow is one row of the fleet capacity table.
type CapacityRow struct {
	Tenant, Cluster, Pool, Before, After string
}

// CapacityRows are every tenant's grants on every member, by tenant name,
// then fleet order, then pool; "-" where the tenant has no quota on the
// pool on that member, at that side.
func CapacityRows(members []CapacityMember) []CapacityRow {
	var rows []CapacityRow
	for _, m := range members {
		before, after := Grants(m.Before), Grants(m.After)
		tenants := union(slices.Collect(maps.Keys(before)), slices.Collect(maps.Keys(after)))
		for _, t := range tenants {
			for _, p := range union(slices.Collect(maps.Keys(before[t])), slices.Collect(maps.Keys(after[t]))) {
				rows = append(rows, CapacityRow{t, m.Cluster, p, orDash(before[t][p]), orDash(after[t][p])})
			}
		}
	}
	order := map[string]int{}
	for i, m := range members {
		order[m.Cluster] = i
	}
	slices.SortStableFunc(rows, func(a, b CapacityRow) int {
		if c := strings.Compare(a.Tenant, b.Tenant); c != 0 {
			return c
		}
		return order[a.Cluster] - order[b.Cluster]
	})
	return rows
}

// union is the sorted union of a and b.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// orDash is s, or "-" when empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteCapacity writes the fleet capacity table per tenant: a changed
// grant is marked ~ (text) or bold (Markdown); names are escaped.
func WriteCapacity(w io.Writer, rows []CapacityRow, markdown bool) {
	if !markdown {
		textsafe.Fprintf(w, "Fleet capacity per tenant (quota per pool, before -> after):\n")
		for _, r := range rows {
			mark := " "
			if r.Before != r.After {
				mark = "~"
			}
			textsafe.Fprintf(w, "  %s %s on %s, pool %s: %s -> %s\n", mark, r.Tenant, r.Cluster, r.Pool, r.Before, r.After)
		}
		return
	}
	textsafe.Fprintf(w, "## Fleet capacity per tenant\n\nWhat each tenant's quota gives it on every cluster, per pool, at the base and with this change.\n\n| Tenant | Cluster | Pool | Before | After |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		after := render.MarkdownText(r.After)
		if r.Before != r.After {
			after = "**" + after + "**"
		}
		textsafe.Fprintf(w, "| %s | %s | %s | %s | %s |\n", render.MarkdownCode(r.Tenant), render.MarkdownCode(r.Cluster), render.MarkdownCode(r.Pool), render.MarkdownText(r.Before), after)
	}
}
