package runtime

// CheckUpcast runs a payload of version from through what a worker does before it
// calls the handler: validate it as version from, upcast it one version at a time to
// the newest, fill in defaults, and validate the result as the newest version. It
// returns the newest version's JSON; when only the last validation fails, it returns
// the invalid result with the error, so that a tool can show both. jobc check calls
// it on sample documents of every older version.
func (jt *JobType) CheckUpcast(from int, payload []byte) ([]byte, error) {
	newest := jt.maxVersion()
	out, err := jt.upcastTo(from, newest, payload)
	if err != nil || from == newest {
		return out, err
	}
	return jt.fillVersionDefaults(newest, out)
}
