package scenario

// RealOutages names the scenarios whose real-time runs (kconform run
// --real-time) lengthen a compressed outage to the real one it stands
// for. Every other scenario's real-time runs keep its faults and only
// give up its client settings, so the result pages say "the real outage"
// of these alone (findings.Catalogue).
func RealOutages() []string {
	var out []string
	for _, s := range Catalogue() {
		if s.RealTime != nil {
			out = append(out, s.Name)
		}
	}
	return out
}
