import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ORDER_PAGE } from '@app/order-domain/order-page';
import { ROOT } from './build-options';
import { PAGE_DOMAIN_PATH, pageDomainScript } from './page-domain';

const PUBLIC = join(ROOT, 'apps', 'order-status', 'public');

describe("the demo page's domain descriptor", () => {
  it('is committed as generated from the domain (npm run build:client)', () => {
    expect(readFileSync(PAGE_DOMAIN_PATH, 'utf8') === pageDomainScript()).toBe(true);
  });

  it.each(['assets/app.js', 'index.html'])(
    '%s names no status or event kind of the domain: it reads them from the descriptor',
    (file) => {
      const text = readFileSync(join(PUBLIC, file), 'utf8');
      const names = [
        ...Object.keys(ORDER_PAGE.statusLabels),
        ...ORDER_PAGE.kinds.flatMap((k) => [k.itemKind, k.wireName]),
      ];
      const quoted = names.filter((n) => text.includes(`'${n}'`) || text.includes(`"${n}"`));
      expect(quoted).toEqual([]);
    },
  );
});
