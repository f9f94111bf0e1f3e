import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LANGUAGES, endText, reasonText, resolveLanguage, t } from '../../src/realtime/page/i18n.js';

// The game page's words (src/realtime/page/i18n.js and lang-*.js) in the player's language,
// the session's `lang` (contract 2.2, 5.6): every language has every string, with the same
// placeholders, and every string the page asks for exists.

const PAGE_DIR = fileURLToPath(new URL('../../src/realtime/page/', import.meta.url));
const read = (file: string) => readFileSync(`${PAGE_DIR}${file}`, 'utf8');
// a script without its comment lines, which may show a call as an example
const code = (file: string) => read(file).replace(/^\s*\/\/.*$/gm, '');
type Strings = Record<string, string>;

const load = async (language: string): Promise<Strings> =>
  ((await import(`${PAGE_DIR}lang-${language}.js`)) as { default: Strings }).default;
const placeholders = (template: string) => [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();

// the keys the page's code and markup name: t('key') in its scripts, data-i18n="key" and
// data-i18n-label="key" in its markup
function keysUsed(): Set<string> {
  const used = new Set<string>();
  for (const file of readdirSync(PAGE_DIR).filter((name) => name.endsWith('.js') && !name.startsWith('lang-'))) {
    for (const match of code(file).matchAll(/(?<![\w.])t\('([^']+)'/g)) used.add(match[1]!);
  }
  // the game page and the recall page (D33)
  for (const file of readdirSync(PAGE_DIR).filter((name) => name.endsWith('.html'))) {
    for (const match of read(file).matchAll(/data-i18n(?:-label)?="([^"]+)"/g)) used.add(match[1]!);
  }
  return used;
}

describe('the game page speaks the session language (contract 2.2, 5.6)', () => {
  it('speaks at least six languages, each from a language file of its own', () => {
    const files = readdirSync(PAGE_DIR)
      .filter((name) => /^lang-[a-z]+\.js$/.test(name))
      .map((name) => name.slice('lang-'.length, -'.js'.length));
    expect([...LANGUAGES].sort()).to.deep.equal(files.sort());
    expect(LANGUAGES.length).to.be.at.least(6);
    expect(LANGUAGES).to.include('en');
  });

  it('has every English string in every language, no other, none empty, with the same placeholders', async () => {
    const en = await load('en');
    for (const language of LANGUAGES) {
      const strings = await load(language);
      expect(Object.keys(strings).sort(), language).to.deep.equal(Object.keys(en).sort());
      for (const [key, template] of Object.entries(strings)) {
        expect(template.trim(), `${language}.${key}`).to.not.equal('');
        expect(placeholders(template), `${language}.${key}`).to.deep.equal(placeholders(en[key]!));
      }
    }
  });

  it('is translated: most strings of each language differ from the English', async () => {
    const en = await load('en');
    for (const language of LANGUAGES.filter((code) => code !== 'en')) {
      const strings = await load(language);
      const same = Object.keys(en).filter((key) => strings[key] === en[key]);
      expect(same.length, `${language}: ${same.join(', ')}`).to.be.below(Object.keys(en).length / 4);
    }
  });

  it('asks only for strings that exist, and every string is asked for', async () => {
    const en = await load('en');
    const used = keysUsed();
    expect([...used].filter((key) => !(key in en)), 'used but missing').to.deep.equal([]);
    expect(Object.keys(en).filter((key) => !used.has(key)), 'defined but unused').to.deep.equal([]);
  });

  it('names every key it asks for in full: no key is computed', () => {
    // the one exception: i18n.js filling the markup's data-i18n elements, checked above
    for (const file of readdirSync(PAGE_DIR).filter((name) => name.endsWith('.js') && !name.startsWith('lang-'))) {
      const computed = [...code(file).matchAll(/(?<![\w.])t\((?!')([^)]*)/g)]
        .map((match) => match[1]!)
        .filter((argument) => !/^el\.dataset\.i18n(Label)?$/.test(argument) && !(file === 'i18n.js' && argument.startsWith('key, vars')));
      expect(computed, file).to.deep.equal([]);
    }
  });

  it('names no decision record or contract section in any text a player reads (D46)', async () => {
    // "D19", "contract 5.6" and the contract's name in each language the page speaks
    const references = [/\bD\d{1,2}\b/, /\b(contract|vertrag|contrato|contrat|contratto|avtal(et)?)\s*\d/i];
    for (const language of LANGUAGES) {
      for (const [key, text] of Object.entries(await load(language))) {
        for (const reference of references) expect(text, `${language}.${key}`).to.not.match(reference);
      }
    }
    // the words of the markup itself, shown until the language file fills them in
    for (const file of readdirSync(PAGE_DIR).filter((name) => name.endsWith('.html'))) {
      const text = read(file)
        .replace(/<!--[\s\S]*?-->/g, ' ')
        .replace(/<(script|style)[\s\S]*?<\/\1>/g, ' ')
        .replace(/<[^>]*>/g, ' ');
      for (const reference of references) expect(text, file).to.not.match(reference);
    }
  });

  it('reads the language from the tag, and anything it does not speak as English', () => {
    expect(resolveLanguage('de')).to.deep.equal({ language: 'de', locale: 'de' });
    expect(resolveLanguage('de-AT')).to.deep.equal({ language: 'de', locale: 'de-AT' });
    expect(resolveLanguage('pt-br')).to.deep.equal({ language: 'pt', locale: 'pt-BR' });
    expect(resolveLanguage('pt_PT')).to.deep.equal({ language: 'pt', locale: 'pt-PT' });
    expect(resolveLanguage('FR')).to.deep.equal({ language: 'fr', locale: 'fr' });
    expect(resolveLanguage('en-GB')).to.deep.equal({ language: 'en', locale: 'en-GB' });
    // a language the page does not speak: English words and English numbers, which agree
    expect(resolveLanguage('nl-NL')).to.deep.equal({ language: 'en', locale: 'en' });
    expect(resolveLanguage('xx')).to.deep.equal({ language: 'en', locale: 'en' });
    expect(resolveLanguage('')).to.deep.equal({ language: 'en', locale: 'en' });
    expect(resolveLanguage(undefined)).to.deep.equal({ language: 'en', locale: 'en' });
  });

  it('fills placeholders and puts every refusal and end into words (contract 8.2, D4, D28)', () => {
    expect(t('reason_bet_out_of_range', { min: '€0.10', max: '€1,000.00' })).to.equal('The stake must be between €0.10 and €1,000.00.');
    expect(reasonText('wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY')).to.equal('Insufficient funds for this stake.');
    expect(reasonText('wallet_rejected:RS_ERROR_UNKNOWN')).to.equal('The casino wallet refused the bet (RS_ERROR_UNKNOWN).');
    expect(reasonText('something_new')).to.equal('Refused (something_new).');
    expect(endText('wallet_status:RS_ERROR_USER_DISABLED')).to.equal('The casino ended this session (RS_ERROR_USER_DISABLED).');
    expect(t('no_such_key')).to.equal('no_such_key');
  });
});
