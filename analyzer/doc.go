// Package analyzer holds agentidem-vet: go/analysis analyzers that flag, at
// compile time, agent tool calls that are unsafe to retry, redeliver or run
// in parallel. It is the static twin of the runtime checks of testkit.
//
// Run it standalone or under go vet (the same binary):
//
//	go get -tool github.com/agentidem/agentidem-go/cmd/agentidem-vet
//	go tool agentidem-vet ./...
//	go vet -vettool=$(go tool -n agentidem-vet) ./...
//
// Each analyzer is a flag of the tool: -concurrentwrites=false turns one
// off. The golangci-lint module plugin in analyzer/golangci runs the same
// analyzers.
//
// The analyzers read the //agentidem:read and //agentidem:write directives
// of tool functions through the shared parser (internal/directive). Every
// annotated function is exported as an analysis fact, so an op declared in
// one package is known where another package calls it, directly or through
// its generated wrapper (refund -> refundTraced, (*Svc).Refund ->
// (*Svc).RefundTraced, or wrapper=IDENT). A function that calls at least one
// wrapper is agent code.
//
// A call need not name its op. It is followed through a variable bound
// once to an op or its wrapper (find := d.FindTicketTraced; find(ctx, id):
// declared with that one value, never assigned again nor addressed),
// through an entry, picked by a constant key, of a map literal bound once
// and only ever indexed (tools := map[string]createFn{"create":
// d.CreateTicketTraced}; tools["create"](ctx, id, title)), and through a
// method of an interface of the module (type desk interface {
// FindTicketTraced(...); ... }) when every type of the module that
// implements it, declared in the package or in a package of the module it
// imports, has the method annotated or generated for the same op, all
// through the wrapper or all not. A type of the module whose method runs
// no op (a test double) leaves the interface unresolved; so do types the
// package cannot see, a method expression ((*Desk).FindTicket, whose
// arguments are shifted), a map indexed by a value known at run time
// (tools[call.Name]: which op runs is the model's choice, judged by the
// runtime checks) and a map that is changed or handed on.
//
// Files with a "// Code generated ... DO NOT EDIT." header are never
// reported. When in doubt, an analyzer says nothing: a false positive is
// worse than a missed finding.
//
// # checkbeforecreate
//
// A read whose result guards a write of the same key, where the write is
// not idempotent at its sink. Two concurrent or redelivered invocations can
// both find nothing and both create.
//
// For annotated ops, the read is an //agentidem:read op, the write an
// //agentidem:write op whose entity (entity=, else identity=) shares a key
// with the read's entity (entity=, else its arguments), and the write runs
// on the branch where the read found nothing: after errors.Is(err,
// ErrNotFound), x == nil, !ok, !exists, n == 0, len(x) == 0, after an
// early return when the read found something (also joined with the error
// check: if err != nil || exists { return err }; a read that answers
// presence in a bool of its own says nothing of presence by a nil error),
// or after a loop over the read's result that returns the element it was
// looking for. A guard that
// tests something other than presence is no check-before-create: a
// boolean counts only when its name says the thing (or the effect) is
// there (ok, exists, found, known, has, seen, already, done, sent,
// notified, processed, created, registered, ...), or, when its name is
// neutral (v), the read's does (isKnownCustomer); !blocked before a
// refund, a fraud or permission flag, is not reported. A field of the
// read's result compared with zero counts only when it identifies the
// thing (t.ID == "", t.Key, a count): acct.Balance == 0 says the account
// is empty, not absent, and dropping that check would be wrong. When an
// argument is built by a call (createTicket(ctx, request(id))), the
// variables it is built from stand in for the key. A write whose every
// INSERT resolves conflicts (ON CONFLICT) or runs in a function literal
// handed to package idem (idem.Do's fn), itself or through a function that
// reaches it (s.dedup.Once(ctx, key, fn) whose body is idem.Do), is
// idempotent at the sink and never reported, and so is one that shows no
// INSERT and uses package idem (an API call under the key); the INSERTs
// and the idem of the functions it calls count, those of its package two
// calls deep, those of other packages through a fact (a store's
// InsertUserIfAbsent, a module's dedup.Do). A plain INSERT outside the
// key makes the write a create, whatever else uses idem beside it (the
// notification's idem.Do, an idem.Key for a log). Package idem is its own
// import path: not its backends (idem/postgres), nor code under its tree.
//
// Wrong:
//
//	t, err := findTicketTraced(ctx, key)
//	if errors.Is(err, ErrNotFound) {
//		t, err = createTicketTraced(ctx, key, title) // createTicket after findTicket on the same key races
//	}
//
// Fixed: drop the check and let the sink deduplicate on the key (idem.Store,
// or a unique constraint with INSERT ... ON CONFLICT DO NOTHING):
//
//	t, err := createTicketTraced(ctx, key, title) // createTicket is idempotent on key
//
// For plain database/sql, pgx and sqlx code, the read is a constant
// SELECT (QueryRow, Query, Get, ...) and the write a constant INSERT (Exec,
// or QueryRow with RETURNING) into the same table, sharing an argument with
// the SELECT, on the branch where the SELECT found no row (sql.ErrNoRows,
// pgx.ErrNoRows, a false EXISTS in a boolean named as above, a zero count, no rows.Next(), a "found"
// flag that only the not-found branch clears or only the found branch
// sets). An UPDATE counts as the read when its affected-row count is then
// tested (RowsAffected() == 0: the hand-rolled upsert). The query may be a
// literal, a constant, a local variable holding one, or a string built at
// run time from constants only: concatenation, fmt.Sprintf, and a helper of
// the package that decorates a constant table name (func table(name
// string) string { return prefix + name }, read as the name itself). A
// prepared statement counts as its query: a local prepared here (Prepare,
// PrepareContext, Preparex), or a struct field prepared with one constant
// query (s.insertStmt, err = db.Prepare(q), or a list of {&s.insertStmt,
// q} pairs prepared together), also through tx.Stmt(s) and through helpers
// that bind a statement to a transaction or return it as is
// (TxStmt(txn, s)). Chains of the sqlf and squirrel builders count when
// the table is a constant: sqlf.From(t)...QueryRowAndClose(ctx, db),
// sq.Insert(t)...RunWith(db).Exec(), keyed by the values of Where, Set and
// Values; an insert chain with Suffix, Options or Clause may resolve
// conflicts and is not judged. Other builders (goqu, huandu's
// sqlbuilder) and queries whose table comes from a variable are not read.
//
// The check and the create may be split across functions. Each function
// is summarized as an analysis fact: the SELECT it runs when it runs one
// read and returns only what that read produced (or constants), and the
// INSERTs it runs, keyed by its parameters (an INSERT followed by a
// unique-violation check is left out). A caller that checks through one
// function and creates through another is judged like the inline case, in
// the same package or another. A call through an interface method of the
// caller's module is resolved to the implementations in the module the
// caller can see (declared in the module's packages it imports, or
// recorded as facts by the packages that implement it); when they
// disagree, when one has no summary, or when none is known, the call is
// unknown.
//
// It is reported on a *sql.DB, *sql.Conn, *pgx.Conn or *pgxpool.Pool, and
// in a transaction begun in the same function or handed to a literal by a
// helper that begins it at the default isolation level
// (withTx(ctx, db, func(tx *sql.Tx) error {...}), pgx.BeginFunc, and
// pgx.BeginTxFunc with options resolved to a level that is not
// serializable); never in a transaction that comes from elsewhere (it may
// be serializable).
//
// What serializes the check and the insert is what the code runs, not
// what it mentions (a log line saying SERIALIZABLE serializes nothing).
// When both run in one transaction begun here, that transaction
// serializes them when it is begun serializable, or with options not
// resolved here (a parameter, a field, a call's result: it may be), or
// when it runs, before the check, a statement that takes a lock held to
// its end: pg_advisory_xact_lock, LOCK TABLE, SET TRANSACTION ISOLATION
// LEVEL SERIALIZABLE. The options are resolved through their value: a
// literal (&sql.TxOptions{Isolation: sql.LevelSerializable},
// pgx.TxOptions{IsoLevel: pgx.Serializable}), a package-level variable the
// package never assigns (var serialOpts = &sql.TxOptions{...}), a local
// variable with what is assigned to it before the Begin; a level set only
// under a branch (if strict { opts.Isolation = sql.LevelSerializable })
// leaves the default on the other path, and is reported. The lock may be
// taken by a helper, func lockKey(ctx, tx *sql.Tx, key string) whose body
// runs the lock on its parameter, in the package or, through a fact, in
// another. Outside a transaction (on a *sql.DB, a pool, a connection)
// only a lock that outlives its statement serializes: a session advisory
// lock (pg_advisory_lock) or MySQL's GET_LOCK, taken before the check; a
// transaction-scoped lock taken on a *sql.DB is released when its one
// statement ends, and a serializable transaction begun beside a check and
// an insert that run on the database, not on it, serializes neither.
// Where the accesses are not resolved (the check and the create are
// annotated ops, a function summarized for its callers, a transaction
// helper), a lock or serializable level the function runs or names still
// silences: there silence is the safe side.
//
// Nor is a check reported under FOR UPDATE or FOR SHARE (not in the
// PostgreSQL check itself, $n placeholders or pgx: it locks no row that
// is absent), or when the function takes a mutex before the check (one
// taken after the insert, for a cache, serializes nothing), or a channel
// semaphore (sem <- struct{}{} with <-sem to release it; a send of
// anything else is no semaphore), or runs the check and the create in a
// function handed to a singleflight.Group's Do or DoChan: these serialize
// the deliveries of one process, as a mutex does. Nor when the check and
// the insert run in one transaction begun on a database the package opens with
// a SQLite driver, and only so (db, err := sql.Open("sqlite", path), or
// "sqlite3"): a SQLite transaction is serializable, and of two that both
// read no row the second to write fails with SQLITE_BUSY. The driver of a
// database that comes from elsewhere is not known (an import of a SQLite
// driver does not say which database a handle is): there, a check and an
// insert in one transaction are reported, and the message adds a
// serializable transaction to the fixes. An INSERT with ON CONFLICT, ON
// DUPLICATE KEY, INSERT IGNORE, INSERT OR IGNORE, INSERT OR REPLACE or NOT
// EXISTS is idempotent, and so is one whose error is then checked for a
// unique violation (an identifier or string after the INSERT that mentions
// unique, dup (duplicate, isDup), conflict, constraint, exists, 23505, 1062, PgError or
// MySQLError; not a variable holding what the SELECT returned, such as an
// exists scanned from SELECT EXISTS and returned, nor a query).
//
// Wrong:
//
//	err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id)
//	if errors.Is(err, sql.ErrNoRows) {
//		_, err = db.Exec("INSERT INTO users (email) VALUES ($1)", email)
//	}
//
// Fixed (with a unique constraint on users.email):
//
//	_, err := db.Exec("INSERT INTO users (email) VALUES ($1) ON CONFLICT DO NOTHING", email)
//
// Wrong: a transaction-scoped lock taken on the database is released as
// its statement ends, before the check runs:
//
//	db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", email)
//	err := db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
//	if errors.Is(err, sql.ErrNoRows) {
//		_, err = db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
//	}
//
// Fixed: take it in the transaction that runs the check and the insert
// (or a helper, lockKey(ctx, tx, email), that does), or begin that
// transaction serializable and retry it on a serialization failure:
//
//	tx, err := db.BeginTx(ctx, nil)
//	...
//	tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", email)
//	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
//	if errors.Is(err, sql.ErrNoRows) {
//		_, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
//	}
//	...
//	err = tx.Commit()
//
// For PostgreSQL queries ($n placeholders or pgx) written as one string
// literal without RETURNING, the diagnostic carries that edit as a
// suggested fix (agentidem-vet -fix).
//
// Over HTTP, the check is a GET of one resource of a collection that
// answered 404, and the create a POST to that collection, on the branch
// where the status was 404 (if resp.StatusCode == http.StatusNotFound, or
// an early return when it was not). The URLs are compared as written
// (concatenation, fmt.Sprintf with a constant format, url.PathEscape and
// the like, a local variable bound once, a request made by
// http.NewRequest or NewRequestWithContext with a constant method and
// sent with Do): the GET's is the POST's followed by one path segment or
// a query, holding a variable (GET base+"/customers/"+id or
// base+"/customers?email="+email, POST base+"/customers"), and the POST
// sends that variable in its body, directly or through the local
// variables the body is built from (json.Marshal of a struct holding it):
// a POST that sends no key (a new session after an expired one) creates
// another thing. Only a status
// of 404 tells absence: net/http returns no error for one, so a POST on a
// transport error, or on another status (401, 500), is not judged; nor is
// a POST to another collection, a subresource, or the resource itself
// (PUT or POST on the key), nor one whose function names an idempotency
// key (an Idempotency-Key header) or looks at the conflict the server
// answers (http.StatusConflict), nor one under a mutex, semaphore or
// singleflight as above. Test files are not judged for HTTP or GORM: a
// test steps through a GET that must answer 404, then the POST, on
// purpose.
//
// Wrong:
//
//	resp, err := c.Get(base + "/customers/" + id)
//	...
//	if resp.StatusCode == http.StatusNotFound {
//		_, err = c.Post(base+"/customers", "application/json", body)
//	}
//
// Fixed: send the key the server deduplicates on, or create with PUT on
// the resource's own URL:
//
//	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/customers", body)
//	req.Header.Set("Idempotency-Key", "customer/"+id)
//	resp, err := c.Do(req)
//
// With GORM, the check is First, Take or Last of a model with equality
// conditions (Where("email = ? AND org = ?", email, org), a struct or map
// literal, inline conditions, a lone primary key), and the create is
// Create of the same model whose fields give a condition's column the same
// value (Create(&User{Email: email}), or a variable declared with such a
// literal and never assigned), on the branch where the read found no
// record (errors.Is(err, gorm.ErrRecordNotFound), or an early return when
// err == nil). FirstOrCreate runs that SELECT and that INSERT itself and
// is judged as the pair. A chain with a call that changes what the
// conditions mean (Or, Not, Joins, Table, Raw, Scopes) is not read, nor a
// create with Clauses (clause.OnConflict). Neither is reported when the
// model declares a unique index covering the key's columns (primaryKey,
// the ID field, unique, uniqueIndex, index:name,unique; gorm.Model
// included): a racing create then fails and its retry finds the record.
// That is why FirstOrCreate keyed on a unique column is not reported,
// while one keyed on a column without a declared index can leave two
// records. Nor when the function runs in a GORM transaction (Transaction,
// Begin) or names a lock (a Locking clause, FOR UPDATE, SERIALIZABLE):
// its isolation is not resolved, and silence is the safe side; nor when
// the create's error is checked for gorm.ErrDuplicatedKey.
//
// Wrong:
//
//	err := db.Where("email = ?", email).First(&u).Error
//	if errors.Is(err, gorm.ErrRecordNotFound) {
//		err = db.Create(&User{Email: email}).Error
//	}
//
// Fixed: a unique index on the key, and an insert that skips a record
// that is there:
//
//	Email string `gorm:"uniqueIndex"`
//	err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&User{Email: email}).Error
//
// # concurrentdeps
//
// An op and an op it declares after= started in the same concurrent batch.
// A batch is what one block starts with go statements, errgroup.Group.Go
// and sync.WaitGroup.Go, up to the first statement that waits (a Wait,
// Lock or RLock call, a sync.Once's Do, a channel receive, a select, a
// range over a channel, or a call of a function of the package, not a tool,
// that waits so, two calls deep: waitAll(&g) whose body is g.Wait()),
// together with what the starting goroutine does meanwhile. Of the
// clauses of a switch or a select one runs: they are no batch, and a
// goroutine started in a branch that then leaves the block (a return, a
// panic, a continue or break out of it) runs beside nothing after that
// branch. A call the starting goroutine defers runs as the function
// returns: in a batch that a wait ends, after it, and no member (one
// deferred where the function returns without waiting is). A dependent op
// and its prerequisite on entities whose argument expressions differ
// (attachInvoice(b) beside createInvoice(a)) are no finding. Calls made
// through a local closure (f := func() {...}; g.Go(f)) count, one level
// deep; in a closure's call, its parameters are the call's arguments, so
// process(a) and process(b) of process := func(id string) {...} are on two
// entities (not when the closure assigns its parameter). A goroutine's call
// is left out when the goroutine waits before it on something another
// goroutine may signal: a channel receive (of a channel the
// prerequisite's goroutine closes or sends on), a range over a channel, a
// Wait (of a WaitGroup the prerequisite's goroutine is part of), a
// sync.Once's Do, a select without default on such a receive, a helper or
// closure that waits so: its order may be enforced. What cannot hold the
// call back until the prerequisite is done is no such wait: a Lock (a
// mutex around each call serializes them in either order; one taken after
// the call, to collect its error under a shared mutex, holds nothing
// back), a wait after the call or in a defer (a channel semaphore's
// release), a receive of ctx.Done(), a select with a default case. A wait
// in a loop around the call counts wherever it is in the loop. Go on an errgroup.Group limited with SetLimit(1) waits
// for the goroutine before it, so it starts a new batch, where the
// SetLimit(1) runs whenever its function does (one under an if, a switch,
// a select or a loop leaves the Go calls concurrent when it does not run).
// A wait through a helper of another package that waits on what it is
// passed (syncutil.WaitAll(&g), through a fact) or through a local closure
// (wait := func() error { return g.Wait() }) ends a batch as well; one
// that locks only a mutex of its own (a logger's) does not. A fan-out helper, a function that starts its function
// parameters in goroutines with no wait between the starts (such as
// parallel(calls ...func() error)), makes a batch of its arguments at every
// call, in its own package or, through a fact, in others.
//
// Calls the check does not follow to a goroutine are not judged, and no
// batch is reported for them: function values taken from a slice or a map
// and started in a loop (for _, c := range calls { g.Go(c) }), and work
// sent to a worker pool over a channel (jobs <- func() error {...}):
// which goroutine runs which call, and when, is decided at run time. The
// interleavings of testkit's runtime checks see those batches.
//
// Wrong:
//
//	//agentidem:write identity=orderID after=createInvoice
//	func attachInvoice(ctx context.Context, orderID string) error
//
//	g.Go(func() error { return createInvoiceTraced(ctx, id) })
//	g.Go(func() error { return attachInvoiceTraced(ctx, id) }) // may run first
//	err := g.Wait()
//
// Fixed: wait between them, or call them in order in one goroutine:
//
//	g.Go(func() error { return createInvoiceTraced(ctx, id) })
//	if err := g.Wait(); err != nil {
//		return err
//	}
//	g.Go(func() error { return attachInvoiceTraced(ctx, id) })
//
// # concurrentwrites
//
// Two writes of one op on the same entity in one concurrent batch. The
// entity is the op's entity= (else identity=) with the parameters replaced
// by the arguments at each call (through a local closure, by the arguments
// of the closure's call); the two are the same when they name the
// same variables and constants, and no variable of the key is assigned
// between the two starts.
//
// Writes whose rows differ do not race: an op whose body only inserts
// rows skipped when there, on a conflict of columns that hold every
// identity parameter (INSERT INTO tags (post, tag) ... ON CONFLICT (post,
// tag) DO NOTHING for identity="post, tag" entity=post), called with
// identities that differ in constants, or differ as written with every
// other argument the same (two variables that hold one tag then add one
// row), ends alike in either order. A body that updates, upserts (DO
// UPDATE), conflicts on fewer columns (ON CONFLICT (post): the first tag
// to land wins), or calls a helper the analyzer cannot see into, is not
// taken so.
//
// A write started in a goroutine at each turn of a loop pairs with
// itself, as the same calls written out do: reported when its entity is
// the same at every turn, not when it depends on a variable the loop
// declares or assigns (one order per turn), nor when the loop waits,
// sends on a channel (a semaphore with room for one), ranges over one or
// sleeps between its starts,
// nor for distinct rows (as above, with the identity changing per turn and
// every other argument not), nor when the goroutine runs it only where a
// value of the turn equals a constant (if tc.Name == "attach", case
// "attach": of a switch on tc.Name): a dispatch of the tool calls a model
// returned runs it at as many turns as the model asked for, maybe one.
// Nor is one reported when the loop ends after starting it (a break, a
// return, a continue of an outer loop: the first match is started, at one
// turn).
//
// Wrong:
//
//	g.Go(func() error { return s.RefundTraced(ctx, o.ID, 100) })
//	g.Go(func() error { return s.RefundTraced(ctx, o.ID, 250) })
//
//	for _, t := range titles {
//		wg.Go(func() { SetTitleTraced(ctx, post, t) })
//	}
//
// Fixed: one write (a refund of 350, the last title), or one after the
// other. Not reported:
//
//	for _, tag := range tags {
//		wg.Go(func() { AddTagTraced(ctx, post, tag) }) // ON CONFLICT (post, tag) DO NOTHING
//	}
//
// # identity
//
// Two findings. First, a write whose identity is built from values that
// differ on every run: an argument of an identity= parameter, or of a
// parameter named idempotencyKey (idem_key, dedupKey, ...) of any function,
// that comes from uuid.New*, time.Now (not when formatted or truncated to a
// coarser key), math/rand, crypto/rand.Text, ulid.Make, xid.New or
// ksuid.New. For identity= parameters the value is followed through local
// variables, random bytes read into them (rand.Read(b),
// io.ReadFull(rand.Reader, b)) and parameterless helpers of the package
// that return such a value (randomKey()); for idempotency-key parameters of
// plain functions only a value made at the call site counts, since a key
// made once before a retry loop is the usual, correct use. A retry or
// redelivery then carries a fresh identity and the sink cannot recognise
// the repeat. So does a write whose key parameter outside its identity=
// (key, one ending in Key or _key, an idempotency key's), which it hands
// its sink, gets a value made at the call site: every attempt sends
// another key (RefundWithKeyTraced(ctx, charge, amount, uuid.NewString())
// in a retry loop).
//
// Wrong:
//
//	err := chargeTraced(ctx, acct, uuid.NewString())
//
// Fixed: derive the key from the request:
//
//	err := chargeTraced(ctx, acct, "charge/"+order.ID)
//
// Second, in agent code, a direct call of an annotated function: the call
// escapes the trace, so the harness can neither see nor fault it. Agent
// code is a function, or a function literal on its own, that calls a
// generated wrapper, and any literal it starts as a goroutine; a literal
// beside it that only reads state, or a benchmark timing the direct call,
// is not. When the wrapper exists, the suggested fix calls it. A call
// through a variable bound once to the annotated function is a direct
// call too (refund := tools.Refund; refund(ctx, id, 100)); one through an
// interface is not judged (the value may be a traced implementation the
// module does not show).
//
// So is an annotated function handed, unwrapped, to a helper that calls
// it: retry(ctx, tools.Refund, id), where retry, a function of the
// package or a local closure bound once, calls that parameter in its own
// body. A helper that only makes a closure around it or stores it (it may
// trace the call), a helper of another package, one that uses this
// toolkit's packages, and a value read for its type
// (reflect.TypeOf(tools.Refund)) are not judged. The suggested fix hands
// the wrapper.
//
// Wrong:
//
//	createInvoiceTraced(ctx, id)
//	attachInvoice(ctx, id) // escapes the trace
//
// Fixed:
//
//	createInvoiceTraced(ctx, id)
//	attachInvoiceTraced(ctx, id)
//
// # directives
//
// Reports malformed //agentidem: directives (unknown keys, a write without
// identity=, an ignore without a reason) and exports the facts the other
// analyzers use.
//
// # Silencing
//
// //agentidem:ignore <reason> silences every diagnostic on its own line and
// on the next line; in a function's doc comment it silences the whole
// function. The reason is required; this analyzer is the one that checks
// it (agentidem-gen skips ignores, which change no wrapper):
//
//	//agentidem:ignore users are created by the nightly import only, one process
//	_, err = db.Exec("INSERT INTO users (email) VALUES ($1)", email)
package analyzer
