package kb

// Pins returns the incident's pinned values, for tests outside the package.
func Pins(r *IncidentRef) []string { return r.pins }

// DecodeSnapshot decodes a snapshot without compiling it.
func DecodeSnapshot(b []byte) error {
	_, err := decodeSnapshot(b)
	return err
}
