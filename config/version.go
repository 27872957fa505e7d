package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseVersionConstraint parses a driver version constraint: an operator
// (>=, >, <=, <, = or none for =) and a dotted version such as 535 or
// 550.54.15.
func ParseVersionConstraint(s string) (op string, version []int, err error) {
	s = strings.TrimSpace(s)
	for _, o := range []string{">=", "<=", ">", "<", "="} {
		if rest, ok := strings.CutPrefix(s, o); ok {
			op, s = o, strings.TrimSpace(rest)
			break
		}
	}
	if op == "" {
		op = "="
	}
	version, err = ParseVersion(s)
	if err != nil {
		return "", nil, fmt.Errorf("driver_version %q is not a version constraint like \">= 535\" or \"550.54.15\": %w", s, err)
	}
	return op, version, nil
}

// ParseVersion parses a dotted numeric version.
func ParseVersion(s string) ([]int, error) {
	if s == "" {
		return nil, fmt.Errorf("empty version")
	}
	parts := strings.Split(s, ".")
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a number", p)
		}
		out[i] = n
	}
	return out, nil
}

// SatisfiesVersion reports whether version have satisfies constraint c. A
// constraint compares only as many components as it gives: "= 550"
// matches 550.54.15.
func SatisfiesVersion(c string, have string) (bool, error) {
	op, want, err := ParseVersionConstraint(c)
	if err != nil {
		return false, err
	}
	got, err := ParseVersion(have)
	if err != nil {
		return false, err
	}
	// Compare as many components as want gives, a missing one as 0.
	g := make([]int, len(want))
	copy(g, got)
	cmp := slices.Compare(g, want)
	switch op {
	case ">=":
		return cmp >= 0, nil
	case ">":
		return cmp > 0, nil
	case "<=":
		return cmp <= 0, nil
	case "<":
		return cmp < 0, nil
	}
	return cmp == 0, nil
}
