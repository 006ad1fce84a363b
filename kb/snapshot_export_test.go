package kb

// Pins returns the incident's pinned values, for tests outside the package.
func Pins(r *IncidentRef) []string { return r.pins }
