import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { profileMarkdown, summarizeProfile, type CpuProfile } from './cpuprofile';

/**
 * `tsx loadtest/src/profile/summarize-profile.ts [--top N] [--skip-ms MS] [--for-ms MS] FILE...`
 * prints the self time per area and the top functions of each profile as Markdown
 * (profiles come from `npm run loadtest -- <scenario> --cpu-prof DIR`; --skip-ms leaves
 * out start-up, --for-ms the teardown after the window).
 */
function main(): number {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      top: { type: 'string' },
      'skip-ms': { type: 'string' },
      'for-ms': { type: 'string' },
    },
  });
  const top = Number(values.top ?? 25);
  const skipMs = Number(values['skip-ms'] ?? 0);
  const forMs = Number(values['for-ms'] ?? Number.POSITIVE_INFINITY);
  if (
    positionals.length === 0 ||
    !Number.isInteger(top) ||
    top < 1 ||
    !(skipMs >= 0) ||
    !(forMs > 0)
  ) {
    process.stderr.write(
      'usage: summarize-profile.ts [--top N] [--skip-ms MS] [--for-ms MS] FILE.cpuprofile...\n',
    );
    return 2;
  }
  for (const file of positionals) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    process.stdout.write(
      `${profileMarkdown(basename(file), summarizeProfile(profile, top, skipMs, forMs))}\n`,
    );
  }
  return 0;
}

if (require.main === module) process.exitCode = main();
