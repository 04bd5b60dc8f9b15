package mirror

import (
	"container/heap"
	"sync"
)

// The blob transfer queue: largest first, closed when the engine is done.

// taskQueue holds the tasks waiting for a worker: largest blob first, then first queued. Only the
// dispatcher takes from it.
type taskQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	h      taskHeap
	seq    int64
	closed bool
}

type queued struct {
	t   *task
	seq int64
}

type taskHeap []queued

func (h taskHeap) Len() int { return len(h) }

func (h taskHeap) Less(i, j int) bool {
	if h[i].t.desc.Size != h[j].t.desc.Size {
		return h[i].t.desc.Size > h[j].t.desc.Size
	}
	return h[i].seq < h[j].seq
}

func (h taskHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *taskHeap) Push(x any) { *h = append(*h, x.(queued)) }

func (h *taskHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newTaskQueue() *taskQueue {
	q := &taskQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *taskQueue) push(t *task) {
	q.mu.Lock()
	q.seq++
	heap.Push(&q.h, queued{t: t, seq: q.seq})
	q.mu.Unlock()
	q.cond.Signal()
}

// wait blocks until a task is queued (true) or the queue is closed and empty (false).
func (q *taskQueue) wait() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.h) == 0 && !q.closed {
		q.cond.Wait()
	}
	return len(q.h) > 0
}

// pop takes the largest task; the queue must not be empty (wait said so, and only the caller pops).
func (q *taskQueue) pop() *task {
	q.mu.Lock()
	defer q.mu.Unlock()
	return heap.Pop(&q.h).(queued).t
}

func (q *taskQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}
