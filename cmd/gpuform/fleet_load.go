package main

import "github.com/gpuform/gpuform/config"

// keepFleet keeps the members' configurations loaded with a fleet's
// listing (config.LoadFleetDir, or a stack's load through
// stack.Options.Fleet), for their stacks (memberStack).
func (g *globals) keepFleet(members []*config.Config) { g.loadedFleet = members }

// loadedMember is member m's configuration loaded with the fleet, nil
// where none was: its stack then loads it from m's directory.
func (g *globals) loadedMember(m fleetMember) *config.Config {
	for _, cfg := range g.loadedFleet {
		if cfg.Cluster != nil && cfg.Cluster.Name == m.name && cfg.Dir == m.dir {
			return cfg
		}
	}
	return nil
}
