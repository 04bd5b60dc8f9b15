package mirror

import (
	"testing"
	"time"

	"github.com/regclient/regclient/types/descriptor"
)

// The dispatcher takes the largest waiting blob first and, among equal sizes, the one queued
// first; a closed, empty queue ends the dispatcher, a closed queue with work still hands it out.
func TestTaskQueueLargestFirstThenQueueOrder(t *testing.T) {
	q := newTaskQueue()
	sizes := []int64{5, 200, 5, 70, 200, 1}
	tasks := make([]*task, len(sizes))
	for i, s := range sizes {
		tasks[i] = &task{desc: descriptor.Descriptor{Size: s}}
		q.push(tasks[i])
	}
	want := []*task{tasks[1], tasks[4], tasks[3], tasks[0], tasks[2], tasks[5]}
	q.close()
	for i, w := range want {
		if !q.wait() {
			t.Fatalf("wait = false with %d tasks left", len(want)-i)
		}
		if got := q.pop(); got != w {
			t.Fatalf("pop %d: got size %d (task %p), want size %d (task %p)", i, got.desc.Size, got, w.desc.Size, w)
		}
	}
	if q.wait() {
		t.Fatal("wait = true on a closed, empty queue")
	}
}

func TestTaskQueueWaitWakesOnPushAndClose(t *testing.T) {
	q := newTaskQueue()
	got := make(chan bool)
	go func() { got <- q.wait() }()
	select {
	case <-got:
		t.Fatal("wait returned on an empty, open queue")
	case <-time.After(50 * time.Millisecond):
	}
	q.push(&task{desc: descriptor.Descriptor{Size: 1}})
	if !<-got {
		t.Fatal("wait = false after a push")
	}
	q.pop()
	go func() { got <- q.wait() }()
	q.close()
	if <-got {
		t.Fatal("wait = true after close on an empty queue")
	}
}
