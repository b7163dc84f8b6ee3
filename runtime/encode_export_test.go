package runtime

// MarshalPayloadForTest is the encoding half of Enqueue: encode, fill defaults, validate.
func MarshalPayloadForTest(jt *JobType, payload any) ([]byte, error) {
	raw, _, err := jt.marshalPayload(jt.WriteVersion, payload, jt.Unique != nil)
	return raw, err
}

// DecodeForTest is what a worker does with a stored payload before calling a handler.
func DecodeForTest[T any](jt *JobType, version int, payload []byte) (T, error) {
	return decoder[T](jt)(version, payload)
}

// DecoderForTest is the decoder a worker builds once per job type.
func DecoderForTest[T any](jt *JobType) func(version int, payload []byte) (T, error) {
	return decoder[T](jt)
}
