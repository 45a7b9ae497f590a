// JdbcClient: one program for the JDBC drivers of dblat's client matrix (pgjdbc, MariaDB
// Connector/J, Jaybird): the driver is the client under test, chosen by the URL. Each
// thread opens a connection with autocommit off, then runs transactions of
//
//   SELECT balance FROM dblat_clients WHERE id = ?
//   UPDATE dblat_clients SET balance = balance + 1 WHERE id = ?
//   COMMIT
//
// through PreparedStatements made once per connection (what an application's JDBC code
// does), an id drawn uniformly from the thread's share of 1..ROWS (thread k of N takes k+1,
// k+1+N, ...: two threads never update one row). It prints one JSON line: the transactions it
// committed, their mean latency and the throughput, as the client measured them.
//
//   java -cp 'LIB/*:CLASSES' JdbcClient --url JDBC-URL [--user U]
//        [--option-file F | --password-file F] [--threads N] [--tx N] [--rows N]
//
// No password is given on the command line: pgjdbc reads it from the pgpass file PGPASSFILE
// names, as libpq does; Connector/J's comes from the [client] group of the MySQL option file
// --option-file names (what the mariadb client's --defaults-extra-file reads), Jaybird's from
// the file --password-file names (what isql's -fetch_password reads).
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;

public final class JdbcClient {
    public static void main(String[] args) throws Exception {
        String url = null, user = "dblat", password = null;
        int threads = 1, txs = 100, rows = 10000;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--url": url = args[i + 1]; break;
                case "--user": user = args[i + 1]; break;
                case "--option-file": password = optionPassword(Path.of(args[i + 1])); break;
                case "--password-file": password = Files.readString(Path.of(args[i + 1])).strip(); break;
                case "--threads": threads = Integer.parseInt(args[i + 1]); break;
                case "--tx": txs = Integer.parseInt(args[i + 1]); break;
                case "--rows": rows = Integer.parseInt(args[i + 1]); break;
                default: throw new IllegalArgumentException("unknown flag " + args[i]);
            }
        }
        if (url == null) throw new IllegalArgumentException("--url is required");
        Properties props = new Properties();
        props.setProperty("user", user);
        if (password != null) props.setProperty("password", password);
        final String u = url;
        final int n = txs, r = rows, nthreads = threads;
        // Two barriers: every thread has connected (connected), then the clock starts, then
        // they go (go). Starting the clock before the connections would time them; after a
        // single barrier, a thread could run transactions before the clock started.
        final CyclicBarrier connected = new CyclicBarrier(threads + 1), go = new CyclicBarrier(threads + 1);
        final AtomicLong committed = new AtomicLong(), latencyNs = new AtomicLong();
        final Exception[] failure = new Exception[1];
        Thread[] ts = new Thread[threads];
        String[] version = new String[1];
        for (int t = 0; t < threads; t++) {
            final int seed = t;
            ts[t] = new Thread(() -> {
                try (Connection c = DriverManager.getConnection(u, props)) {
                    c.setAutoCommit(false);
                    synchronized (version) {
                        version[0] = c.getMetaData().getDriverName() + " " + c.getMetaData().getDriverVersion();
                    }
                    PreparedStatement sel = c.prepareStatement("SELECT balance FROM dblat_clients WHERE id = ?");
                    PreparedStatement upd = c.prepareStatement("UPDATE dblat_clients SET balance = balance + 1 WHERE id = ?");
                    SplittableRandom rnd = new SplittableRandom(seed);
                    connected.await();
                    go.await();
                    for (int i = 0; i < n; i++) {
                        int id = 1 + seed + nthreads * rnd.nextInt(Math.max(1, r / nthreads));
                        long t0 = System.nanoTime();
                        sel.setInt(1, id);
                        try (ResultSet rs = sel.executeQuery()) {
                            if (!rs.next()) throw new IllegalStateException("no row " + id);
                        }
                        upd.setInt(1, id);
                        if (upd.executeUpdate() != 1) throw new IllegalStateException("no row updated " + id);
                        c.commit();
                        latencyNs.addAndGet(System.nanoTime() - t0);
                        committed.incrementAndGet();
                    }
                } catch (Exception e) {
                    synchronized (failure) { failure[0] = e; }
                    connected.reset();
                    go.reset();
                }
            });
            ts[t].start();
        }
        try {
            connected.await();
        } catch (java.util.concurrent.BrokenBarrierException e) {
            // a thread failed: reported below
        }
        long start = System.nanoTime();
        try {
            go.await();
        } catch (java.util.concurrent.BrokenBarrierException e) {
            // likewise
        }
        for (Thread t : ts) t.join();
        double elapsed = (System.nanoTime() - start) / 1e9;
        if (failure[0] != null) {
            failure[0].printStackTrace();
            System.exit(1);
        }
        long k = committed.get();
        System.out.printf(java.util.Locale.ROOT,
            "{\"version\":\"%s\",\"committed\":%d,\"elapsed_s\":%.6f,\"latency_ms_mean\":%.6f,\"tps\":%.6f}%n",
            version[0], k, elapsed, k == 0 ? 0.0 : latencyNs.get() / 1e6 / k, k / elapsed);
    }

    // optionPassword returns the password= of the [client] group of a MySQL option file, as
    // dblat writes them (key=value lines, no quoting).
    static String optionPassword(Path file) throws Exception {
        String group = "";
        for (String raw : Files.readAllLines(file)) {
            String line = raw.strip();
            if (line.startsWith("[")) { group = line.replaceAll("^\\[|\\]$", ""); continue; }
            int eq = line.indexOf('=');
            if (group.equals("client") && eq > 0 && line.substring(0, eq).strip().equals("password")) return line.substring(eq + 1).strip();
        }
        throw new IllegalArgumentException(file + ": no password in its [client] group");
    }
}
