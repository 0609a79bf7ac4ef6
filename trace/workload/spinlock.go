package workload

// spinlock: every thread of a group takes one of Words locks, chosen at
// random, in the loop compilers emit for a per-thread lock,
//
//	for (done = false; !done; )
//	    if (atomicCAS(&lock[k], 0, 1) == 0) { critical(); atomicExch(&lock[k], 0); done = true; }
//
// so a warp issues CAS on the lanes still trying, then exchange-0 on the
// lanes that won, and loops. A group's warps are interleaved round-robin,
// one instruction each, as a warp scheduler does; a lock held by one warp
// makes the others' CAS fail until its holder's release. The generator keeps
// the lock words and applies each CAS in lane order, as the replay does, to
// know which lanes win. The next group starts when every thread of this one
// has been through its critical section, when every lock is free again.
type spinlock struct {
	cas, rel *instr
	locks    []uint32 // the lock words as the replay will have them
	group    int64
	warps    []lockWarp
	next     int // the warp the scheduler picks next
	live     int // warps with threads still to go
}

type lockWarp struct {
	lock    [32]uint32 // each lane's lock
	pending uint32     // lanes that have not been through their critical section
	winners uint32     // lanes holding their lock, to release next
}

func startSpinlock(g *Generator) (stepper, error) {
	cas, err := g.instr(opCAS)
	if err != nil {
		return nil, err
	}
	rel, err := g.instr(opExch)
	if err != nil {
		return nil, err
	}
	if cas.exec != rel.exec {
		return nil, &SpecError{Msg: "spinlock: CAS and exchange execution sizes differ"}
	}
	g.region(uint64(g.spec.Words))
	return &spinlock{cas: cas, rel: rel, locks: make([]uint32, g.spec.Words), group: -1,
		warps: make([]lockWarp, cas.wpg)}, nil
}

func (s *spinlock) newGroup(g *Generator) {
	s.group++
	mask := s.cas.st.ExecMask()
	for w := range s.warps {
		lw := &s.warps[w]
		for l := range s.cas.exec {
			lw.lock[l] = uint32(g.rng.Uint64N(uint64(len(s.locks))))
		}
		lw.pending, lw.winners = mask, 0
	}
	s.next, s.live = 0, len(s.warps)
}

func (s *spinlock) step(g *Generator) {
	l := &g.lanes
	for {
		if s.live == 0 {
			s.newGroup(g)
		}
		w := s.next
		s.next = (s.next + 1) % len(s.warps)
		lw := &s.warps[w]
		if lw.pending == 0 {
			continue
		}
		for i := range s.cas.exec {
			l.addr[i] = Base + 4*uint64(lw.lock[i])
		}
		if lw.winners != 0 {
			// Release: exchange 0 on the winners.
			for i := range s.rel.exec {
				l.val[i] = 0
				if lw.winners&(1<<i) != 0 {
					s.locks[lw.lock[i]] = 0
				}
			}
			g.emit(s.rel, s.group, int64(w), lw.winners)
			lw.pending &^= lw.winners
			lw.winners = 0
			if lw.pending == 0 {
				s.live--
			}
			return
		}
		// Acquire: CAS 0 -> 1 on the lanes still trying; in lane order, the
		// first lane to find its lock free takes it.
		for i := range s.cas.exec {
			l.cmp[i], l.swap[i] = 0, 1
			if lw.pending&(1<<i) != 0 && s.locks[lw.lock[i]] == 0 {
				s.locks[lw.lock[i]] = 1
				lw.winners |= 1 << i
			}
		}
		g.emit(s.cas, s.group, int64(w), lw.pending)
		return
	}
}
