package engine

import "testing"

func TestAppendLeafKey(t *testing.T) {
	nine := map[string]any{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
		nine[k] = k
	}
	tests := []struct {
		name   string
		a, b   map[string]any
		ok     bool
		sameAB bool
	}{
		{"same content, any order", map[string]any{"cpu": "1", "gpu": int64(2)}, map[string]any{"gpu": int64(2), "cpu": "1"}, true, true},
		{"a string is not an integer", map[string]any{"n": "1"}, map[string]any{"n": int64(1)}, true, false},
		{"an int is not an int64", map[string]any{"n": 1}, map[string]any{"n": int64(1)}, true, false},
		{"a boolean is not a string", map[string]any{"n": true}, map[string]any{"n": "true"}, true, false},
		{"nil is a scalar", map[string]any{"n": nil}, map[string]any{"n": ""}, true, false},
		{"keys and values do not run together", map[string]any{"ab": "c"}, map[string]any{"a": "bc"}, true, false},
		{"empty", map[string]any{}, nil, false, false},
		{"more than MaxSharedLeaf entries", nine, nil, false, false},
		{"a float", map[string]any{"n": 1.5}, nil, false, false},
		{"a nested map", map[string]any{"n": map[string]any{}}, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ka, ok := AppendLeafKey(nil, tt.a)
			if ok != tt.ok {
				t.Fatalf("AppendLeafKey(%v) ok = %v, want %v", tt.a, ok, tt.ok)
			}
			var l LeafEntries
			added := len(tt.a) > 0
			for k, v := range tt.a {
				added = added && l.Add(k, v)
			}
			if added != tt.ok {
				t.Fatalf("LeafEntries.Add took all of %v = %v, want %v", tt.a, added, tt.ok)
			}
			if !ok {
				return
			}
			if kl := l.AppendKey(nil); string(kl) != string(ka) {
				t.Errorf("LeafEntries wrote key %q of %v, AppendLeafKey %q", kl, tt.a, ka)
			}
			kb, _ := AppendLeafKey([]byte("reused"), tt.b)
			if got := string(kb[len("reused"):]) == string(ka); got != tt.sameAB {
				t.Errorf("keys of %v and %v equal = %v, want %v", tt.a, tt.b, got, tt.sameAB)
			}
		})
	}
}
