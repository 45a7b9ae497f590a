package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/workload"
)

// LoadConfig says what Load generates and how.
type LoadConfig struct {
	// Warehouses is the scale W (§4.2.2); at least 1.
	Warehouses int
	// Seed makes the data reproducible: equal seeds and loader versions give equal data
	// (bar the load-time timestamps), whatever Workers is.
	Seed int64
	// Workers is how many connections load in parallel; 0 means 2 × GOMAXPROCS.
	Workers int
	// Progress, when set, is called with the rows stored so far and the total to store. It
	// is called from the loader's goroutines but never concurrently, at least once per
	// 16 Ki rows per worker and once at the end with doneRows == totalRows; it must return
	// quickly.
	Progress func(doneRows, totalRows int64)
	// NoBulk loads with multi-row INSERTs even when the engine has an engine.BulkLoader:
	// the portable path, kept testable on every engine.
	NoBulk bool
}

// Load drops the TPC-C tables of t (if any), creates them, fills them per §4.3 with
// cfg.Warehouses warehouses, adds primary keys and indexes, refreshes optimizer statistics
// where the dialect says how, installs the stored procedures of ModeProcedure where tpcc
// has them in the engine's Dialect.ProcedureLanguage, and finally records the load in
// tpcc_meta. It blocks until done; on error or cancellation the database is left without
// tpcc_meta, so LoadedWarehouses reports it as not loaded.
//
// Rows are generated in chunks of one table and one warehouse (or part of one), each chunk
// from its own random stream, so the data does not depend on scheduling. Chunks go through
// the engine's BulkLoader when it has one (one COPY per chunk on PostgreSQL), otherwise
// through multi-row INSERTs in one transaction per chunk. Tables are created without keys;
// a table's keys and indexes are built (and its statistics refreshed) as soon as its last
// chunk is in, while other tables still load, which is much faster than maintaining them
// row by row. Tables stay logged (no UNLOGGED or similar tricks). At most Workers
// connections of t.DB are used at a time. An engine.LoadSession's settings apply from the
// first chunk to the end of the load.
func Load(ctx context.Context, t workload.Target, cfg LoadConfig) (err error) {
	if cfg.Warehouses < 1 {
		return fmt.Errorf("tpcc load: warehouses must be at least 1, got %d", cfg.Warehouses)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = 2 * runtime.GOMAXPROCS(0)
	}
	d := t.Engine.Dialect()
	db := t.DB

	if err := dropProcedures(ctx, db, d); err != nil {
		return err
	}
	if err := dropTables(ctx, db, d); err != nil {
		return err
	}
	for _, tb := range append([]*table{tMeta}, tables...) {
		if _, err := db.ExecContext(ctx, tb.createSQL(d)); err != nil {
			return fmt.Errorf("tpcc load: create %s: %w", tb.name, err)
		}
	}

	g := newGenerator(cfg.Seed, cfg.Warehouses, time.Now())
	chunks := planChunks(cfg.Warehouses)
	prog := workload.NewLoadProgress(cfg.Progress)
	left := map[*table]int{}
	for _, c := range chunks {
		prog.AddTotal(c.rows(g))
		left[c.t]++
	}
	caps := engine.Caps(t.Engine)
	bulk := caps.BulkLoader
	if cfg.NoBulk {
		bulk = nil
	}
	if ls := caps.LoadSession; ls != nil && bulk != nil {
		end, err := ls.BeginLoad(ctx, db)
		if err != nil {
			return fmt.Errorf("tpcc load: %w", err)
		}
		defer func() {
			if e := end(context.WithoutCancel(ctx)); e != nil && err == nil {
				err = fmt.Errorf("tpcc load: %w", e)
			}
		}()
	}
	s := newScheduler()
	var mu sync.Mutex
	for _, c := range chunks {
		s.push(false, func(ctx context.Context) error {
			src := prog.Counting(c.next(g))
			var err error
			if bulk != nil {
				_, err = bulk.CopyRows(ctx, db, c.t.name, c.t.colNames(), src.Next)
			} else {
				_, err = workload.InsertRows(ctx, db, d, c.t.name, c.t.colNames(), plainRows(src.Next), d.MaxInsertRows)
			}
			src.Flush()
			if err != nil {
				return fmt.Errorf("tpcc load: %s (warehouse %d): %w", c.t.name, c.w, err)
			}
			mu.Lock()
			left[c.t]--
			done := left[c.t] == 0
			mu.Unlock()
			if done {
				// The table is complete: build its keys next, while other tables load.
				s.push(true, func(ctx context.Context) error { return finishTable(ctx, db, d, c.t) })
			}
			return nil
		})
	}
	if err := s.run(ctx, workers); err != nil {
		return err
	}

	// ModeProcedure's stored procedures, where tpcc has them in the engine's language.
	if procLanguages[d.ProcedureLanguage] != nil {
		if err := InstallProcedures(ctx, t); err != nil {
			return fmt.Errorf("tpcc load: %w", err)
		}
	}
	_, err = db.ExecContext(ctx, d.Rebind("INSERT INTO tpcc_meta (warehouses, seed, c_last_load, loader_version, loaded_at) VALUES (?, ?, ?, ?, ?)"),
		cfg.Warehouses, cfg.Seed, g.cLoad, loaderVersion, g.now)
	if err != nil {
		return fmt.Errorf("tpcc load: record load: %w", err)
	}
	return nil
}

// finishTable adds t's primary key and indexes, then refreshes its statistics.
func finishTable(ctx context.Context, db *sql.DB, d engine.Dialect, t *table) error {
	for _, q := range t.keysSQL() {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("tpcc load: %s: %w", q, err)
		}
	}
	if d.Analyze != nil {
		if _, err := db.ExecContext(ctx, d.Analyze(t.name, t.statsCols)); err != nil {
			return fmt.Errorf("tpcc load: analyze %s: %w", t.name, err)
		}
	}
	return nil
}

// dropTables drops tpcc_meta first, so that an interrupted drop or load never looks loaded.
func dropTables(ctx context.Context, db *sql.DB, d engine.Dialect) error {
	for _, tb := range append([]*table{tMeta}, tables...) {
		if d.DropTable != nil {
			if _, err := db.ExecContext(ctx, d.DropTable(tb.name)); err != nil {
				return fmt.Errorf("tpcc load: drop %s: %w", tb.name, err)
			}
			continue
		}
		_, _ = db.ExecContext(ctx, "DROP TABLE "+tb.name) // fails when absent: fine
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// scheduler runs jobs on a fixed number of goroutines. Jobs may push more jobs, to the
// front (urgent) or the back of the queue; run returns when the queue is empty and no job
// is running, or at the first error, after canceling the context of the running jobs.
type scheduler struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []func(context.Context) error
	running int
	err     error
}

func newScheduler() *scheduler {
	s := &scheduler{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *scheduler) push(urgent bool, job func(context.Context) error) {
	s.mu.Lock()
	if urgent {
		s.queue = append([]func(context.Context) error{job}, s.queue...)
	} else {
		s.queue = append(s.queue, job)
	}
	s.mu.Unlock()
	s.cond.Signal()
}

func (s *scheduler) run(ctx context.Context, workers int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			for {
				for len(s.queue) == 0 && s.running > 0 && s.err == nil {
					s.cond.Wait()
				}
				if len(s.queue) == 0 || s.err != nil {
					s.cond.Broadcast() // let the other waiters see the end too
					return
				}
				job := s.queue[0]
				s.queue = s.queue[1:]
				s.running++
				s.mu.Unlock()
				err := job(ctx)
				s.mu.Lock()
				s.running--
				if err != nil && s.err == nil {
					s.err = err
					cancel()
				}
				s.cond.Broadcast()
			}
		})
	}
	wg.Wait()
	if s.err == nil {
		s.err = ctx.Err()
	}
	return s.err
}

// plainRows is next for workload.InsertRows: the pointers the generators put in rows (see
// generator) are dereferenced, for drivers that want plain values and for multi-row
// statements, which hold several rows' values. next fills a row of its own.
func plainRows(next func([]any) bool) func([]any) bool {
	var src []any
	return func(row []any) bool {
		if src == nil {
			src = make([]any, len(row))
		}
		if !next(src) {
			return false
		}
		for i, v := range src {
			row[i] = plainValue(v)
		}
		return true
	}
}

// plainValue dereferences a pointer the generators put in rows.
func plainValue(v any) any {
	switch x := v.(type) {
	case *int64:
		return *x
	case *string:
		return *x
	case *money:
		return *x
	case *rate:
		return *x
	case *time.Time:
		return *x
	}
	return v
}

// chunk is one unit of load work: rows of one table for one warehouse (or part of one).
type chunk struct {
	t      *table
	w      int // warehouse, 0 for ITEM
	lo, hi int // inclusive range of items (ITEM, STOCK) or districts; 0 when unused
}

// Partition sizes. Each chunk has its own random stream, named by table, warehouse and lo,
// so changing these changes the data: bump loaderVersion with them. Two parts per
// warehouse for the big tables give the scheduler pieces of ~20–30 MB to balance.
const (
	itemsPerChunk     = 50000
	districtsPerChunk = 5
)

// planChunks lists the chunks of a load, the largest (by estimated bytes) first, so that
// the workers finish at about the same time (longest-processing-time-first scheduling).
func planChunks(w int) []chunk {
	var cs []chunk
	for lo := 1; lo <= numItems; lo += itemsPerChunk {
		cs = append(cs, chunk{t: tItem, lo: lo, hi: lo + itemsPerChunk - 1})
	}
	cs = append(cs, chunk{t: tWarehouse}, chunk{t: tDistrict})
	for wid := 1; wid <= w; wid++ {
		for lo := 1; lo <= numItems; lo += itemsPerChunk {
			cs = append(cs, chunk{t: tStock, w: wid, lo: lo, hi: lo + itemsPerChunk - 1})
		}
		for lo := 1; lo <= districtsPerW; lo += districtsPerChunk {
			cs = append(cs, chunk{t: tCustomer, w: wid, lo: lo, hi: lo + districtsPerChunk - 1},
				chunk{t: tOrderLine, w: wid, lo: lo, hi: lo + districtsPerChunk - 1})
		}
		cs = append(cs, chunk{t: tHistory, w: wid}, chunk{t: tOrders, w: wid}, chunk{t: tNewOrder, w: wid})
	}
	// Approximate bytes per row in COPY text: §4.2.2's typical row sizes, adjusted for text
	// encoding. Only their ranking matters.
	rowBytes := map[*table]int64{tStock: 320, tCustomer: 680, tOrderLine: 64, tItem: 90, tHistory: 50, tOrders: 36, tNewOrder: 12}
	size := func(c chunk) int64 {
		switch c.t {
		case tStock, tItem:
			return int64(c.hi-c.lo+1) * rowBytes[c.t]
		case tCustomer:
			return int64(c.hi-c.lo+1) * customersPerDistrict * rowBytes[c.t]
		case tOrderLine:
			return int64(c.hi-c.lo+1) * ordersPerDistrict * 10 * rowBytes[c.t] // 10 lines per order on average
		case tHistory:
			return districtsPerW * customersPerDistrict * rowBytes[c.t]
		case tOrders:
			return districtsPerW * ordersPerDistrict * rowBytes[c.t]
		case tNewOrder:
			return districtsPerW * (ordersPerDistrict - firstUndelivered + 1) * rowBytes[c.t]
		}
		return 1 // WAREHOUSE, DISTRICT
	}
	// ORDER-LINE first: its primary key takes longest to build, and it is built while the
	// other tables load. Then the largest chunks first.
	sort.SliceStable(cs, func(i, j int) bool {
		if oi, oj := cs[i].t == tOrderLine, cs[j].t == tOrderLine; oi != oj {
			return oi
		}
		return size(cs[i]) > size(cs[j])
	})
	return cs
}

// generator holds what every chunk of one load shares: the seed, the scale, the text
// pools, C-Load and the load time.
type generator struct {
	seed  int64
	w     int
	pool  *textPool
	cLoad int       // C for NURand(255, 0, 999) of C_LAST at load (§4.3.3.1, §2.1.6.1)
	now   time.Time // "date/time given by the operating system when loaded" (§4.3.3.1)
}

func newGenerator(seed int64, w int, now time.Time) *generator {
	return &generator{
		seed: seed, w: w, pool: newTextPool(seed),
		// §4.3.3.1: the C used for C_LAST at load is chosen at random, independently of runs.
		cLoad: workload.NewRand(seed, "c-load").IntN(aCLast + 1),
		// Whole seconds: the resolution §1.3.1 asks of "date and time", and the shortest
		// text for the server to parse in every CUSTOMER, HISTORY, ORDER and ORDER-LINE row.
		now: now.Truncate(time.Second),
	}
}

// olCounts returns O_OL_CNT for orders 1..3000 of district (w, d): random within [5..15]
// (§4.3.3.1), drawn fresh (§4.3.2.1 forbids the pre-generated pool for O_OL_CNT). ORDER and
// ORDER-LINE chunks both replay this stream, so Σ O_OL_CNT matches the ORDER-LINE rows.
func (g *generator) olCounts(w, d int) []int {
	r := workload.NewRand(g.seed, "ol-cnt", w, d)
	c := make([]int, ordersPerDistrict+1)
	for o := 1; o <= ordersPerDistrict; o++ {
		c[o] = randInt(r, 5, 15)
	}
	return c
}

// rows is how many rows the chunk generates.
func (c chunk) rows(g *generator) int64 {
	nd := int64(c.hi - c.lo + 1)
	switch c.t {
	case tItem, tStock:
		return nd
	case tWarehouse:
		return int64(g.w)
	case tDistrict:
		return int64(g.w) * districtsPerW
	case tCustomer:
		return nd * customersPerDistrict
	case tHistory:
		return districtsPerW * customersPerDistrict
	case tOrders:
		return districtsPerW * ordersPerDistrict
	case tNewOrder:
		return districtsPerW * (ordersPerDistrict - firstUndelivered + 1)
	case tOrderLine:
		var n int64
		for d := c.lo; d <= c.hi; d++ {
			for _, k := range g.olCounts(c.w, d)[1:] {
				n += int64(k)
			}
		}
		return n
	}
	return 0
}

// next returns the chunk's row source for engine.BulkLoader.CopyRows. Rows hold pointers
// to the generator's variables (*int64, *string, *money, *rate, *time.Time) or nil for
// NULL: storing a pointer in an interface does not allocate, so generating a row costs
// only the random draws. The values are valid until the next call.
func (c chunk) next(g *generator) func([]any) bool {
	switch c.t {
	case tItem:
		return g.items(c.lo, c.hi)
	case tWarehouse:
		return g.warehouses()
	case tDistrict:
		return g.districts()
	case tStock:
		return g.stock(c.w, c.lo, c.hi)
	case tCustomer:
		return g.customers(c.w, c.lo, c.hi)
	case tHistory:
		return g.history(c.w)
	case tOrders:
		return g.orders(c.w)
	case tOrderLine:
		return g.orderLines(c.w, c.lo, c.hi)
	case tNewOrder:
		return g.newOrders(c.w)
	}
	panic("tpcc: no generator for " + c.t.name)
}

// items generates ITEM rows lo..hi (§4.3.3.1).
func (g *generator) items(lo, hi int) func([]any) bool {
	r := workload.NewRand(g.seed, "item", lo)
	var id, imID int64
	var name, data string
	var price money
	i := lo
	return func(row []any) bool {
		if i > hi {
			return false
		}
		id = int64(i)                         // unique within [100,000]
		imID = int64(randInt(r, 1, 10000))    // random within [1..10,000]
		name = g.pool.aString(r, 14, 24)      // a-string [14..24]
		price = money(randInt(r, 100, 10000)) // random within [1.00..100.00]
		data = g.pool.dataString(r)           // a-string [26..50], 10 % ORIGINAL
		row[0], row[1], row[2], row[3], row[4] = &id, &imID, &name, &price, &data
		i++
		return true
	}
}

// address fills name, street 1 and 2, city, state, zip as §4.3.3.1 gives them for
// WAREHOUSE and DISTRICT: name a-string [6..10], streets and city [10..20], state 2
// letters, zip per §4.3.2.7.
func (g *generator) address(r *rand.Rand, a *[6]string) {
	a[0] = g.pool.aString(r, 6, 10)
	a[1] = g.pool.aString(r, 10, 20)
	a[2] = g.pool.aString(r, 10, 20)
	a[3] = g.pool.aString(r, 10, 20)
	a[4] = g.pool.letterString(r, 2)
	a[5] = zip(r)
}

// warehouses generates WAREHOUSE rows 1..W (§4.3.3.1).
func (g *generator) warehouses() func([]any) bool {
	var id int64
	var a [6]string
	var tax rate
	ytd := money(300000_00) // W_YTD = 300,000.00
	w := 1
	return func(row []any) bool {
		if w > g.w {
			return false
		}
		r := workload.NewRand(g.seed, "warehouse", w)
		id = int64(w)
		g.address(r, &a)
		tax = rate(randInt(r, 0, 2000)) // random within [0.0000..0.2000]
		row[0], row[7], row[8] = &id, &tax, &ytd
		for i := range a {
			row[1+i] = &a[i]
		}
		w++
		return true
	}
}

// districts generates DISTRICT rows for every warehouse (§4.3.3.1).
func (g *generator) districts() func([]any) bool {
	var did, wid int64
	var a [6]string
	var tax rate
	ytd := money(30000_00)                  // D_YTD = 30,000.00
	nextOID := int64(ordersPerDistrict + 1) // D_NEXT_O_ID = 3,001
	w, d := 1, 1
	var r *rand.Rand
	return func(row []any) bool {
		if w > g.w {
			return false
		}
		if d == 1 {
			r = workload.NewRand(g.seed, "district", w)
		}
		did, wid = int64(d), int64(w)
		g.address(r, &a)
		tax = rate(randInt(r, 0, 2000)) // random within [0.0000..0.2000]
		row[0], row[1], row[8], row[9], row[10] = &did, &wid, &tax, &ytd, &nextOID
		for i := range a {
			row[2+i] = &a[i]
		}
		if d++; d > districtsPerW {
			d, w = 1, w+1
		}
		return true
	}
}

// stock generates STOCK rows for items lo..hi of warehouse w (§4.3.3.1).
func (g *generator) stock(w, lo, hi int) func([]any) bool {
	r := workload.NewRand(g.seed, "stock", w, lo)
	var iid, qty, zero int64
	wid := int64(w)
	var dist [10]string
	var data string
	i := lo
	return func(row []any) bool {
		if i > hi {
			return false
		}
		iid = int64(i)
		qty = int64(randInt(r, 10, 100)) // random within [10..100]
		for k := range dist {
			dist[k] = g.pool.letterString(r, 24) // a-string of 24 letters
		}
		data = g.pool.dataString(r) // a-string [26..50], 10 % ORIGINAL
		row[0], row[1], row[2] = &iid, &wid, &qty
		for k := range dist {
			row[3+k] = &dist[k]
		}
		// S_YTD, S_ORDER_CNT, S_REMOTE_CNT = 0
		row[13], row[14], row[15], row[16] = &zero, &zero, &zero, &data
		i++
		return true
	}
}

// customers generates CUSTOMER rows of districts dlo..dhi of warehouse w (§4.3.3.1).
func (g *generator) customers(w, dlo, dhi int) func([]any) bool {
	var cid, did int64
	wid := int64(w)
	var first, last, st1, st2, city, state, zipc, phone, credit, data string
	middle := "OE"
	var discount rate
	creditLim := money(50000_00) // 50,000.00
	balance := money(-10_00)     // -10.00
	ytd := money(10_00)          // 10.00
	payCnt, delivCnt := int64(1), int64(0)
	since := g.now
	d, c := dlo, 1
	var r *rand.Rand
	return func(row []any) bool {
		if d > dhi {
			return false
		}
		if c == 1 {
			r = workload.NewRand(g.seed, "customer", w, d)
		}
		cid, did = int64(c), int64(d)
		first = g.pool.aString(r, 8, 16)
		// C_LAST: customers 1..1000 iterate 0..999, the others NURand(255, 0, 999) with C-Load.
		if c <= 1000 {
			last = lastName(c - 1)
		} else {
			last = lastName(nurand(r, aCLast, g.cLoad, 0, 999))
		}
		st1, st2, city = g.pool.aString(r, 10, 20), g.pool.aString(r, 10, 20), g.pool.aString(r, 10, 20)
		state, zipc = g.pool.letterString(r, 2), zip(r)
		phone = g.pool.nString(r, 16)
		credit = "GC"
		if r.IntN(10) == 0 { // "BC" in 10 % of rows
			credit = "BC"
		}
		discount = rate(randInt(r, 0, 5000)) // random within [0.0000..0.5000]
		data = g.pool.aString(r, 300, 500)
		row[0], row[1], row[2], row[3], row[4], row[5], row[6] = &cid, &did, &wid, &first, &middle, &last, &st1
		row[7], row[8], row[9], row[10], row[11], row[12], row[13] = &st2, &city, &state, &zipc, &phone, &since, &credit
		row[14], row[15], row[16], row[17], row[18], row[19], row[20] = &creditLim, &discount, &balance, &ytd, &payCnt, &delivCnt, &data
		if c++; c > customersPerDistrict {
			c, d = 1, d+1
		}
		return true
	}
}

// history generates one HISTORY row per customer of warehouse w (§4.3.3.1).
func (g *generator) history(w int) func([]any) bool {
	r := workload.NewRand(g.seed, "history", w)
	var cid, did int64
	wid := int64(w)
	amount := money(10_00) // H_AMOUNT = 10.00
	date := g.now
	var data string
	d, c := 1, 1
	return func(row []any) bool {
		if d > districtsPerW {
			return false
		}
		cid, did = int64(c), int64(d)
		data = g.pool.aString(r, 12, 24)
		row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7] = &cid, &did, &wid, &did, &wid, &date, &amount, &data
		if c++; c > customersPerDistrict {
			c, d = 1, d+1
		}
		return true
	}
}

// orders generates ORDER rows of warehouse w (§4.3.3.1).
func (g *generator) orders(w int) func([]any) bool {
	var oid, did, cid, carrier, olCnt int64
	wid := int64(w)
	allLocal := int64(1)
	entry := g.now
	d, o := 1, 1
	var r *rand.Rand
	var perm, cnt []int
	return func(row []any) bool {
		if d > districtsPerW {
			return false
		}
		if o == 1 {
			r = workload.NewRand(g.seed, "orders", w, d)
			perm = r.Perm(customersPerDistrict) // O_C_ID from a random permutation of [1..3,000]
			cnt = g.olCounts(w, d)
		}
		oid, did, cid = int64(o), int64(d), int64(perm[o-1]+1)
		olCnt = int64(cnt[o])
		row[0], row[1], row[2], row[3], row[4] = &oid, &did, &wid, &cid, &entry
		if o < firstUndelivered {
			carrier = int64(randInt(r, 1, 10)) // random within [1..10] if O_ID < 2,101
			row[5] = &carrier
		} else {
			row[5] = nil // else null
		}
		row[6], row[7] = &olCnt, &allLocal
		if o++; o > ordersPerDistrict {
			o, d = 1, d+1
		}
		return true
	}
}

// orderLines generates ORDER-LINE rows of districts dlo..dhi of warehouse w (§4.3.3.1).
func (g *generator) orderLines(w, dlo, dhi int) func([]any) bool {
	var oid, did, num, iid int64
	wid := int64(w)
	qty := int64(5) // OL_QUANTITY = 5
	var amount money
	var dist string
	delivery := g.now
	d, o, n := dlo, 1, 1
	var r *rand.Rand
	var cnt []int
	return func(row []any) bool {
		if d > dhi {
			return false
		}
		if o == 1 && n == 1 {
			r = workload.NewRand(g.seed, "order-line", w, d)
			cnt = g.olCounts(w, d)
		}
		oid, did, num = int64(o), int64(d), int64(n)
		iid = int64(randInt(r, 1, numItems))                                                // random within [1..100,000], uniform
		row[0], row[1], row[2], row[3], row[4], row[5] = &oid, &did, &wid, &num, &iid, &wid // OL_SUPPLY_W_ID = W_ID
		if o < firstUndelivered {
			row[6] = &delivery // OL_DELIVERY_D = O_ENTRY_D if OL_O_ID < 2,101
			amount = 0         // OL_AMOUNT = 0.00 if OL_O_ID < 2,101
		} else {
			row[6] = nil                          // else null
			amount = money(randInt(r, 1, 999999)) // random within [0.01..9,999.99]
		}
		dist = g.pool.letterString(r, 24) // a-string of 24 letters
		row[7], row[8], row[9] = &qty, &amount, &dist
		if n++; n > cnt[o] {
			n = 1
			if o++; o > ordersPerDistrict {
				o, d = 1, d+1
			}
		}
		return true
	}
}

// newOrders generates the NEW-ORDER rows of warehouse w: the last 900 orders of each
// district, O_ID 2,101..3,000 (§4.3.3.1).
func (g *generator) newOrders(w int) func([]any) bool {
	var oid, did int64
	wid := int64(w)
	d, o := 1, firstUndelivered
	return func(row []any) bool {
		if d > districtsPerW {
			return false
		}
		oid, did = int64(o), int64(d)
		row[0], row[1], row[2] = &oid, &did, &wid
		if o++; o > ordersPerDistrict {
			o, d = firstUndelivered, d+1
		}
		return true
	}
}

// meta is the tpcc_meta row.
type meta struct {
	warehouses int
	seed       int64
	cLoad      int
	version    int
}

// readMeta reads tpcc_meta. A missing table or row wraps workload.ErrNotLoaded; so does
// any failing query on a database that answers pings (the table does not exist, or is not
// readable), since that is what a missing table looks like through database/sql.
func readMeta(ctx context.Context, db *sql.DB) (meta, error) {
	var m meta
	err := db.QueryRowContext(ctx, "SELECT warehouses, seed, c_last_load, loader_version FROM tpcc_meta").
		Scan(&m.warehouses, &m.seed, &m.cLoad, &m.version)
	switch {
	case err == nil:
		if m.warehouses < 1 {
			return m, fmt.Errorf("tpcc_meta says %d warehouses: %w", m.warehouses, workload.ErrNotLoaded)
		}
		return m, nil
	case errors.Is(err, sql.ErrNoRows):
		return m, fmt.Errorf("tpcc_meta is empty (an unfinished load?): %w", workload.ErrNotLoaded)
	case ctx.Err() != nil:
		return m, ctx.Err()
	}
	if perr := db.PingContext(ctx); perr != nil {
		return m, err
	}
	return m, fmt.Errorf("no TPC-C data (%v): %w", workload.FirstLine(err), workload.ErrNotLoaded)
}

// LoadedWarehouses returns how many warehouses the last completed Load stored in db. It
// wraps workload.ErrNotLoaded when there is no completed load.
func LoadedWarehouses(ctx context.Context, db *sql.DB) (int, error) {
	m, err := readMeta(ctx, db)
	return m.warehouses, err
}
