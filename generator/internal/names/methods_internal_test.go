package names

import (
	"reflect"
	"slices"
	"testing"

	"github.com/jobc-dev/jobc/runtime"
)

// TestHandleMembersMatchRuntimeJob: handleMembers is exactly the exported fields and
// methods of *runtime.Job, plus the embedded field's own name: a member added to the
// runtime's Job without updating the list fails here.
func TestHandleMembersMatchRuntimeJob(t *testing.T) {
	want := []string{"Job"}
	typ := reflect.TypeFor[*runtime.Job]()
	for i := range typ.NumMethod() {
		want = append(want, typ.Method(i).Name)
	}
	for _, f := range reflect.VisibleFields(typ.Elem()) {
		if f.IsExported() {
			want = append(want, f.Name)
		}
	}
	got := handleMembers()
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("handleMembers() = %v\n*runtime.Job has %v", got, want)
	}
	if !handleMember("Snooze") || handleMember("Transient") {
		t.Errorf("handleMember(Snooze) = %t, handleMember(Transient) = %t; want true, false", handleMember("Snooze"), handleMember("Transient"))
	}
}
