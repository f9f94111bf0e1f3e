import { expect } from 'chai';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The documentation holds together: every relative link of README.md and docs/**/*.md names
// a file of the repository and, for a markdown file, a heading it has; and nothing in the
// repository points at the specification folder beside it, which a user of the repository
// does not have.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// spelled in pieces so that this file does not contain what it looks for: the folder beside
// the repository where its authors keep the specification and style notes (its spec/,
// style/ and hooks/), which a user of the repository does not have. `../shared/` alone
// is the repository's own src/shared as a role imports it.
const OUTSIDE = ['spec', 'style', 'hooks'].map((folder) => ['..', 'shared', folder].join('/'));

function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
      const relative = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) return walk(relative);
      return entry.name.endsWith('.md') ? [relative] : [];
    });
  return ['README.md', ...walk('docs')];
}

// the text outside fenced code blocks, with inline code spans blanked out
function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length));
    })
    .join('\n');
}

// GitHub's heading anchors: the heading's text without markup, lower case, without
// punctuation other than - and _, spaces as -; a repeated anchor gets -1, -2, ...
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1]!);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*~]/g, '');
    const slug = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return found;
}

// [text](target), ![alt](target) and [label]: target, outside code
function links(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const defined = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]!);
  return [...inline, ...defined];
}

// The repository's files: every file under the root but .git and what .gitignore leaves out
// (read here rather than asked of git: the unit tier starts no child process)
function repositoryFiles(): string[] {
  const ignored = readFileSync(path.join(ROOT, '.gitignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const isIgnored = (relative: string, isDirectory: boolean) =>
    relative === '.git' ||
    ignored.some((pattern) => {
      const directoryOnly = pattern.endsWith('/');
      const name = pattern.replace(/^\/|\/$/g, '');
      if (directoryOnly && !isDirectory) return false;
      const glob = new RegExp(`^${name.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}$`);
      // a pattern with a slash inside is anchored at the root; one without matches any name
      return name.includes('/') ? glob.test(relative) : glob.test(path.posix.basename(relative));
    });
  const walk = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
      const relative = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (isIgnored(relative, entry.isDirectory())) return [];
      if (entry.isDirectory()) return walk(relative);
      return entry.isFile() ? [relative] : [];
    });
  return walk('');
}

describe('documentation links', () => {
  const files = markdownFiles();

  it('finds the README and the documents', () => {
    expect(files).to.include.members(['README.md', 'docs/contract.md', 'docs/operator-guide.md', 'docs/operations.md']);
  });

  for (const file of files) {
    it(`${file}: every relative link resolves, anchors included`, () => {
      const source = readFileSync(path.join(ROOT, file), 'utf8');
      const broken: string[] = [];
      for (const link of links(source)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('//')) continue; // https:, mailto:, ...
        const [target, anchor] = link.split('#', 2) as [string, string | undefined];
        const resolved = target === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURI(target)));
        if (resolved.startsWith('..') || !existsSync(path.join(ROOT, resolved))) {
          broken.push(`${link}: no file ${resolved}`);
          continue;
        }
        if (anchor === undefined || !resolved.endsWith('.md') || statSync(path.join(ROOT, resolved)).isDirectory()) continue;
        const targetAnchors = anchors(readFileSync(path.join(ROOT, resolved), 'utf8'));
        if (!targetAnchors.has(decodeURIComponent(anchor))) broken.push(`${link}: ${resolved} has no heading #${anchor}`);
      }
      expect(broken, broken.join('\n')).to.deep.equal([]);
    });
  }

  it(`no file of the repository refers to the authors' own ${['..', 'shared'].join(' / ')}, which a user of it does not have`, () => {
    const needles = OUTSIDE.map((outside) => Buffer.from(outside));
    const files = repositoryFiles();
    expect(files).to.include.members(['package.json', 'src/main.ts', 'docs/contract.md']);
    expect(files.filter((file) => file.startsWith('node_modules/') || file.startsWith('dist/'))).to.deep.equal([]);
    const offending = files.filter((file) => {
      const content = readFileSync(path.join(ROOT, file));
      return needles.some((needle) => content.includes(needle));
    });
    expect(offending).to.deep.equal([]);
  });
});

describe('heading anchors as GitHub makes them', () => {
  const cases: [string, string][] = [
    ['## 7.1 Wallet statuses and the service\'s reaction', '71-wallet-statuses-and-the-services-reaction'],
    ['### The `rgs` tool', 'the-rgs-tool'],
    ['## Player channel: bet reject reasons (contract 8.2, D28)', 'player-channel-bet-reject-reasons-contract-82-d28'],
    ['## `rgs_wallet_jobs` and [links](x.md)', 'rgs_wallet_jobs-and-links'],
    ['# Heading #', 'heading'],
  ];
  for (const [heading, slug] of cases) {
    it(`${heading} → #${slug}`, () => {
      expect([...anchors(heading)]).to.deep.equal([slug]);
    });
  }

  it('a repeated heading gets -1, a heading inside a code block none', () => {
    expect([...anchors('## Notes\n\n## Notes\n\n```\n## Not a heading\n```\n')]).to.deep.equal(['notes', 'notes-1']);
  });
});
