package kb

import "testing"

// Close waits on inFlight while writes may still start: drained closes
// when the count drops to zero, and a start while someone waits is fine.
func TestInFlightDrains(t *testing.T) {
	var f inFlight
	closed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	if !closed(f.drained()) {
		t.Fatal("nothing under way, but drained is open")
	}
	end1, end2 := f.start(), f.start()
	c := f.drained()
	end1()
	end1() // twice is harmless
	if closed(c) {
		t.Fatal("drained closed with one operation still under way")
	}
	end3 := f.start() // starts while someone waits
	end2()
	if closed(c) {
		t.Fatal("drained closed with an operation started during the wait")
	}
	end3()
	if !closed(c) {
		t.Fatal("drained still open after every operation ended")
	}
}
