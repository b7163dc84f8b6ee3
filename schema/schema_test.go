package schema

import "testing"

func TestMigrationsAreNumberedInOrder(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %d has version %d", i, m.Version)
		}
		if m.SQL == "" || m.Name == "" {
			t.Errorf("migration %d is empty or unnamed: %+v", m.Version, m)
		}
	}
	if Latest() != ms[len(ms)-1].Version {
		t.Errorf("Latest() = %d, want %d", Latest(), ms[len(ms)-1].Version)
	}
	if Bootstrap() == "" {
		t.Error("bootstrap.sql is empty")
	}
}
