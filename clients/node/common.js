// Shared by the Node clients of dblat's client matrix: flags, connections, timing, output.
// A client module calls main(version, open), where open(args) resolves to
// { tx(id), close() }: tx runs one transaction (SELECT balance by id, UPDATE it, COMMIT).
// Client k of N draws its ids from k+1, k+1+N, ...: two never update one row.
// main opens one connection per client, starts them together, and prints one JSON line:
// the transactions committed, their mean latency and the throughput, as the client
// measured them. No password is given on the command line: pg reads it from the pgpass file
// PGPASSFILE names, mysql2's comes from the MySQL option file --option-file names.
'use strict';
const fs = require('fs');

exports.SELECT = 'SELECT balance FROM dblat_clients WHERE id = ';
exports.UPDATE = 'UPDATE dblat_clients SET balance = balance + 1 WHERE id = ';

function parse() {
  const a = { host: '127.0.0.1', user: 'dblat', 'option-file': '', threads: 1, tx: 100, rows: 10000, mode: '' };
  const argv = process.argv.slice(2);
  for (let i = 0; i + 1 < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, '');
    if (!(k in a) && k !== 'port' && k !== 'db') throw new Error('unknown flag ' + argv[i]);
    a[k] = ['port', 'threads', 'tx', 'rows'].includes(k) ? Number(argv[i + 1]) : argv[i + 1];
  }
  return a;
}

// optionPassword returns the password= of the [client] group of a MySQL option file, as
// dblat writes them (key=value lines, no quoting).
exports.optionPassword = function optionPassword(file) {
  let group = '';
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) { group = line.replace(/^\[|\]$/g, ''); continue; }
    const eq = line.indexOf('=');
    if (group === 'client' && eq > 0 && line.slice(0, eq).trim() === 'password') return line.slice(eq + 1).trim();
  }
  throw new Error(file + ': no password in its [client] group');
};

// A small seeded generator (xorshift32), so that each client draws its own ids.
function rng(seed) {
  let x = (seed + 1) * 2654435761 >>> 0 || 1;
  return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x; };
}

exports.main = async function main(version, open) {
  const args = parse();
  const conns = await Promise.all(Array.from({ length: args.threads }, () => open(args)));
  let committed = 0, latency = 0n;
  const start = process.hrtime.bigint();
  await Promise.all(conns.map(async (c, s) => {
    const next = rng(s);
    for (let i = 0; i < args.tx; i++) {
      const id = 1 + s + args.threads * (next() % Math.max(1, Math.floor(args.rows / args.threads)));
      const t0 = process.hrtime.bigint();
      await c.tx(id);
      latency += process.hrtime.bigint() - t0;
      committed++;
    }
  }));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  await Promise.all(conns.map((c) => c.close()));
  console.log(JSON.stringify({ version, committed, elapsed_s: elapsed,
    latency_ms_mean: committed ? Number(latency) / 1e6 / committed : 0, tps: committed / elapsed }));
};
