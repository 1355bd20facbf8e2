// The peer side of `make bench-peer` (docs/benchmarks.md): mt940js over the
// same shared MT940 files the engine parses.
//
//   node peer.js list <dir> <file>...
//                                 copies the files mt940js parses into dir,
//                                 from their first :20: on (it refuses the
//                                 header lines some banks put before it), and
//                                 prints the copies' paths, one a line
//   node peer.js bench <listfile> [seconds]
//                                 parses them all, again and again, for about
//                                 that long and prints "MB/s <n>" (input bytes)
'use strict';
const fs = require('fs');
const path = require('path');
const mt940js = require('mt940js');

const parser = new mt940js.Parser();

function parses(text) {
  try {
    return parser.parse(text).length > 0;
  } catch (e) {
    return false;
  }
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'list') {
  const [dir, ...files] = args;
  fs.mkdirSync(dir, { recursive: true });
  files.forEach((f, i) => {
    let text = fs.readFileSync(f, 'utf8');
    const start = text.search(/^:20:/m);
    if (start > 0) text = text.slice(start);
    if (!parses(text)) return;
    const out = dir + '/' + i + '-' + path.basename(f);
    fs.writeFileSync(out, text);
    console.log(out);
  });
} else if (cmd === 'bench') {
  const files = fs.readFileSync(args[0], 'utf8').split('\n').filter(Boolean);
  const texts = files.map((f) => fs.readFileSync(f, 'utf8'));
  const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);
  const seconds = Number(args[1] || 1);
  for (let i = 0; i < 200; i++) for (const t of texts) parser.parse(t); // warm the JIT
  let rounds = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < seconds) {
    for (const t of texts) parser.parse(t);
    rounds++;
    elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  }
  console.log('MB/s ' + ((rounds * bytes) / elapsed / 1e6).toFixed(2) + ' files ' + files.length + ' bytes ' + bytes);
} else {
  console.error('usage: node peer.js list <file>... | bench <listfile> [seconds]');
  process.exit(2);
}
