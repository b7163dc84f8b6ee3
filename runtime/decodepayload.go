package runtime

// DecodePayload decodes a stored payload of any version jt knows into T, the newest
// payload type, exactly as a worker does before it calls the handler: it validates the
// payload against its version's schema, upcasts it to the newest version, fills in
// defaults and decodes the result. A payload that fails returns the *ClassError of
// class invalid_payload that would fail the job. Test helpers (package jobctest) call
// it, so that what a test sees is what a handler would receive.
func DecodePayload[T any](jt *JobType, version int, payload []byte) (T, error) {
	return decoder[T](jt)(version, payload)
}
