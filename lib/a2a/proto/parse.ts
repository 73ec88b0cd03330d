/**
 * @module lib/a2a/proto/parse — reads the proto3 subset the A2A schema is written in (messages,
 * enums, oneofs, maps, `optional`, nested types, one service) into plain declarations; options
 * and annotations are skipped. Type names stay as written: lib/a2a/proto/schema.ts resolves them.
 */

/** A field as declared; `type` is a scalar name or a (possibly qualified) message or enum name. */
export interface FieldDecl {
  name: string;
  no: number;
  type: string;
  label: 'single' | 'repeated' | 'optional';
  oneof?: string;
  /** Key scalar of a `map<K, V>` field (then `type` is V and `label` is repeated). */
  mapKey?: string;
}

export interface MessageDecl {
  fullName: string;
  fields: FieldDecl[];
}

export interface EnumDecl {
  fullName: string;
  values: { name: string; no: number }[];
}

export interface RpcDecl {
  name: string;
  input: string;
  output: string;
  serverStreaming: boolean;
  clientStreaming: boolean;
}

export interface ProtoFile {
  package: string;
  messages: MessageDecl[];
  enums: EnumDecl[];
  services: { fullName: string; rpcs: RpcDecl[] }[];
}

const TOKEN =
  /\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:[^"\\]|\\.)*"|[A-Za-z_][\w.]*|-?\d+|[{}()<>=;:,[\]]/y;

function tokenize(text: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) throw new Error(`proto: unexpected character at offset ${at}`);
    const t = m[0];
    if (!/^\s/.test(t) && !t.startsWith('//') && !t.startsWith('/*')) out.push(t);
  }
  return out;
}

/**
 * Parses proto3 source.
 * @throws Error on syntax outside the subset (a bug in a schema this project ships).
 */
// long: one recursive-descent parser whose rules share a token cursor; split, they would pass it around
export function parseProto(text: string): ProtoFile {
  const t = tokenize(text);
  let i = 0;
  const file: ProtoFile = { package: '', messages: [], enums: [], services: [] };
  const peek = () => t[i];
  const next = () => {
    if (i >= t.length) throw new Error('proto: unexpected end');
    return t[i++]!;
  };
  const expect = (s: string) => {
    const got = next();
    if (got !== s) throw new Error(`proto: expected '${s}', got '${got}' (token ${i})`);
  };
  /** Skips a balanced group starting at the open token just read. */
  const skipGroup = (open: string, close: string) => {
    let depth = 1;
    while (depth > 0) {
      const s = next();
      if (s === open) depth++;
      else if (s === close) depth--;
    }
  };
  const skipStatement = () => {
    while (peek() !== ';') {
      if (next() === '{') skipGroup('{', '}');
    }
    next();
  };
  const qualify = (scope: string, name: string) => (scope ? `${scope}.${name}` : name);

  function parseEnum(scope: string): void {
    const decl: EnumDecl = { fullName: qualify(scope, next()), values: [] };
    expect('{');
    while (peek() !== '}') {
      const name = next();
      if (name === 'option' || name === 'reserved') {
        skipStatement();
        continue;
      }
      expect('=');
      decl.values.push({ name, no: Number(next()) });
      if (peek() === '[') next(), skipGroup('[', ']');
      expect(';');
    }
    next();
    file.enums.push(decl);
  }

  function parseField(first: string, oneof?: string): FieldDecl {
    let label: FieldDecl['label'] = 'single';
    let type = first;
    let mapKey: string | undefined;
    if (first === 'repeated' || first === 'optional') {
      label = first;
      type = next();
    }
    if (type === 'map') {
      expect('<');
      mapKey = next();
      expect(',');
      type = next();
      expect('>');
      label = 'repeated';
    }
    const name = next();
    expect('=');
    const no = Number(next());
    if (peek() === '[') next(), skipGroup('[', ']');
    expect(';');
    return {
      name,
      no,
      type,
      label,
      ...(oneof ? { oneof } : {}),
      ...(mapKey ? { mapKey } : {}),
    };
  }

  function parseMessage(scope: string): void {
    const decl: MessageDecl = { fullName: qualify(scope, next()), fields: [] };
    expect('{');
    while (peek() !== '}') {
      const s = next();
      if (s === 'message') parseMessage(decl.fullName);
      else if (s === 'enum') parseEnum(decl.fullName);
      else if (s === 'option' || s === 'reserved' || s === 'extensions') skipStatement();
      else if (s === 'oneof') {
        const group = next();
        expect('{');
        while (peek() !== '}') {
          const f = next();
          if (f === 'option') skipStatement();
          else decl.fields.push(parseField(f, group));
        }
        next();
      } else decl.fields.push(parseField(s));
    }
    next();
    file.messages.push(decl);
  }

  function parseService(): void {
    const fullName = qualify(file.package, next());
    const rpcs: RpcDecl[] = [];
    expect('{');
    while (peek() !== '}') {
      const s = next();
      if (s !== 'rpc') {
        skipStatement();
        continue;
      }
      const name = next();
      expect('(');
      const clientStreaming = peek() === 'stream' && next() === 'stream';
      const input = next();
      expect(')');
      expect('returns');
      expect('(');
      const serverStreaming = peek() === 'stream' && next() === 'stream';
      const output = next();
      expect(')');
      if (peek() === '{') next(), skipGroup('{', '}');
      else expect(';');
      rpcs.push({ name, input, output, serverStreaming, clientStreaming });
    }
    next();
    file.services.push({ fullName, rpcs });
  }

  while (i < t.length) {
    const s = next();
    if (s === 'package') {
      file.package = next();
      expect(';');
    } else if (s === 'message') parseMessage(file.package);
    else if (s === 'enum') parseEnum(file.package);
    else if (s === 'service') parseService();
    else if (s === 'syntax' || s === 'import' || s === 'option') skipStatement();
    else throw new Error(`proto: unexpected '${s}' at top level`);
  }
  return file;
}
