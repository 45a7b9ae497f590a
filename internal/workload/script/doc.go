// Package script is pgbench's script language (PostgreSQL 15's pgbench, plus 17's
// \syncpipeline): it parses a script file, which is one transaction, and interprets it for
// one client, sending its SQL through an Executor; and it is the workload "script", which
// runs users' own transactions, written in that language, on every engine dblat drives.
//
// # The language
//
// A script is SQL statements, each ended by a semicolon outside quotes, comments and
// parentheses (psql's lexical rules, src/fe_utils/psqlscan.l), and meta-commands, each a
// backslash and a name up to the end of its line (a backslash at the end of a line
// continues it). SQL refers to variables as :name; in the Literal mode the value's text is
// substituted, in the Params mode a placeholder the executor chooses (Dollar, Question)
// stands in and the value travels as an argument. Meta-commands: \set name expression,
// \gset [prefix] and \aset [prefix] after a statement, \if/\elif/\else/\endif, \sleep n
// [us|ms|s], \startpipeline, \syncpipeline, \endpipeline. Expressions have pgbench's whole
// grammar (exprparse.y: integer, double, boolean and NULL constants, :variables, arithmetic,
// bitwise, comparison and logical operators, IS [NOT] NULL/TRUE/FALSE, ISNULL, NOTNULL,
// CASE) and its functions, with its types, promotions and errors (integer overflow and
// integer division by zero fail the transaction). The random functions follow pgbench's
// definitions exactly, on pgbench's own generator (PRNG, xoroshiro128**): seeded as pgbench
// seeds its clients (PgbenchSeeds), a client draws pgbench's values; hash(), hash_fnv1a(),
// hash_murmur2() and permute() return pgbench's values for the same arguments.
//
// # Where it differs from pgbench
//
//   - \shell and \setshell are refused when the script is parsed: dblat does not run shell
//     commands from a benchmark script. They would be timed as part of the transaction, and
//     a script read back from a results store could run anything on the client machine.
//   - A :name inside a quoted string, a quoted identifier, a dollar-quoted string or a
//     comment is text, in both modes (pgbench substitutes it in -M simple and turns it into
//     a parameter otherwise); \: writes a colon that is never a variable (for Firebird's
//     PSQL :variables, say).
//   - A variable that no \set, \gset or \aset before it sets, and that is neither automatic
//     nor defined with -D, is a parse error where it is read; a variable unset at run time
//     is an error in both modes (pgbench leaves :name in the text in -M simple and sends NULL
//     otherwise).
//   - A retry sees the variables as its first try saw them (pgbench restores only the
//     generator); see Client.
//   - Also found when parsing, where pgbench fails at run time or not at all:
//     \startpipeline, \syncpipeline and \endpipeline out of order in the text, \gset and
//     \aset inside a pipeline, constant arguments of the random functions outside their
//     ranges, functions given more than 16 arguments, unterminated quotes and comments.
//   - Statements made only of comments are not sent; MySQL's `quoted identifiers` are opaque
//     like "these"; semicolons inside BEGIN ... END of CREATE TRIGGER, CREATE OR ALTER,
//     RECREATE and Firebird's EXECUTE BLOCK, and after the DECLAREs before a Firebird
//     routine's BEGIN, do not end the statement (psql knows CREATE FUNCTION and PROCEDURE
//     only).
//   - Shifts by a negative count or by 64 or more take the count modulo 64 (undefined in
//     C; what pgbench does on x86-64).
//
// # The workload
//
// The package also registers the workload "script" (workload.go, terminal.go, files.go,
// load.go): each script given with -f FILE[@WEIGHT] (or -b, one of pgbench's built-in
// scripts in builtin/) is one transaction type named after its file, which a terminal
// chooses at random in proportion to its weight and runs as one pgbench client (Client),
// on one pool connection per transaction; the headline figure is TPS. FILE.ENGINE.sql
// beside FILE.sql runs instead on that engine (files.go). The language's Executor is the
// engine's own where it has one (engine.ScriptConns: PostgreSQL on pgconn, with pgbench's
// protocols and pipelines), else database/sql, where an engine whose SQL cannot begin a
// transaction maps BEGIN, COMMIT and ROLLBACK onto its driver's (engine.TxStatements:
// Firebird) and one whose autocommit is unsafe (engine.TxOnly) commits each statement
// outside a transaction on its own. A script that leaves a transaction open at its end is
// refused where the text shows it, else rolled back and failed at run time (ErrLeftOpen).
// An init script (--init) makes the data; its hash recorded in the database says it is
// loaded (load.go). The texts that ran are the workload's Sources, stored with the run.
//
// # Neighbours
//
// The language knows no engine: an Executor runs the SQL, and CaptureRows helps one over
// database/sql return rows. Its SQL is lexed by package sqllex, in a dialect that spells
// psql's rules (which package wire's normaliser shares with the engines' dialects); the
// statements, :variables and meta-commands are this package's. The workload branches on the engines' capabilities, never on
// their names (it only builds variant file names from them). It neither times, counts nor
// retries transactions: package runner does, calling Terminal.Run again for a retry, which
// the Client runs with the same draws.
package script
