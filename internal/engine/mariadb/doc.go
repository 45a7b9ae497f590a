// Package mariadb is dblat's MariaDB engine, which also serves MySQL 8 servers: it opens
// connections through go-sql-driver/mysql (via database/sql), classifies MariaDB/MySQL
// errors, reads back the variables and status counters the server actually runs with,
// bulk-loads with LOAD DATA LOCAL INFILE streamed from memory (load.go), and runs private
// managed MariaDB servers (server.go, settings.go).
//
// DSNs come in two forms. The URL form is mysql://user:pw@host:3306/db?params (mariadb://
// is accepted too), with the Unix-socket variants mysql://user@unix(/path/sock)/db and
// mysql://user@localhost/db?socket=/path/sock; the driver's native form
// user:pw@tcp(host:3306)/db?params passes through unchanged. Parameters are the driver's:
// interpolateParams (default false: a statement with arguments is prepared and executed on
// the server, two round trips; true: one round trip), parseTime, multiStatements, ...; any
// other key is sent to the server at connect as a session variable (SET key=value), except
// dblat's own option_file (OptionFileParam): a MySQL option file that gives the password, as
// managed servers' DSNs name theirs.
//
// What it does not do: it runs no workload and measures no latency (packages workload and
// runner do, through engine.Engine and engine.BulkLoader); it does not install MariaDB
// (scripts/setup.sh does) and never touches the system's mariadb service, its
// /etc/mysql configuration or /var/lib/mysql; its managed servers are MariaDB only (MySQL 8's
// mysqld --initialize is not driven here, though Open, Inspect and Stats work against it).
//
// Neighbours: package engine above defines the interfaces implemented here; package managed
// keeps the instance records that Launcher fills; mariadbtest gives tests a shared managed
// server. The CLI picks this engine by name ("mariadb") through engine.Lookup.
package mariadb
