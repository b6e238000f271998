/**
 * The part of zod's API that the files `swarm status` and `swarm send` read are declared with,
 * for their bundles only (scripts/bundle.mjs aliases `zod` to this module there): the same schema
 * declarations, checked by plain functions built in microseconds. A value they accept is what zod
 * would return (test/unit/zod-lite.test.ts checks it on a corpus); anything they reject, and every
 * feature they do not model, is handed to the real zod schema built from the same declaration,
 * loaded only then — so a corrupt file fails with zod's own issue, word for word.
 */
import { createRequire } from 'node:module'
import type * as Zod from 'zod'

/** `check` says whether the value is accepted (and gives the output then); `real` builds the zod schema. */
type Check = (value: unknown) => { ok: true; value: unknown } | { ok: false }
type Real = (z: typeof Zod) => Zod.ZodType

const REJECT = { ok: false } as const
const ok = (value: unknown) => ({ ok: true, value }) as const

let zod: typeof Zod | undefined
function realZod(): typeof Zod {
  zod ??= createRequire(import.meta.url)('zod') as typeof Zod
  return zod
}

/** `{}` or `Object.create(null)`, without an own `__proto__` key (zod would set the prototype). */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false
  const proto = Object.getPrototypeOf(v)
  return (proto === Object.prototype || proto === null) && !Object.hasOwn(v, '__proto__')
}

export class LiteSchema {
  /** Set when the schema accepts a missing value (optional, default): an object leaves the key out. */
  readonly optional_: boolean
  private realSchema: Zod.ZodType | undefined
  constructor(
    readonly check: Check,
    readonly real: Real,
    optional = false,
    /** What an object schema is made of, for `extend` and for discriminated unions. */
    readonly shapeOf?: { shape: Record<string, LiteSchema>; loose: boolean },
    /** A literal's value, for discriminated unions. */
    readonly literalValue?: unknown,
  ) {
    this.optional_ = optional
  }
  private zodSchema(): Zod.ZodType {
    this.realSchema ??= this.real(realZod())
    return this.realSchema
  }
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: Zod.ZodError } {
    const r = this.check(value)
    if (r.ok) return { success: true, data: r.value }
    return this.zodSchema().safeParse(value) as { success: true; data: unknown } | { success: false; error: Zod.ZodError }
  }
  parse(value: unknown): unknown {
    const r = this.check(value)
    return r.ok ? r.value : this.zodSchema().parse(value)
  }
  optional(): LiteSchema {
    return new LiteSchema(
      (v) => (v === undefined ? ok(undefined) : this.check(v)),
      (z) => this.real(z).optional(),
      true,
    )
  }
  nullable(): LiteSchema {
    return new LiteSchema(
      (v) => (v === null ? ok(null) : this.check(v)),
      (z) => this.real(z).nullable(),
      this.optional_,
    )
  }
  default(value: unknown): LiteSchema {
    return new LiteSchema(
      (v) => (v === undefined ? ok(Array.isArray(value) ? [...value] : isPlainObject(value) ? { ...value } : value) : this.check(v)),
      (z) => (this.real(z) as Zod.ZodAny).default(value),
      true,
    )
  }
  transform(fn: (value: never) => unknown): LiteSchema {
    return new LiteSchema(
      (v) => {
        const r = this.check(v)
        return r.ok ? ok(fn(r.value as never)) : REJECT
      },
      (z) => this.real(z).transform(fn as (v: unknown) => unknown),
      this.optional_,
    )
  }
  /** A further condition on the accepted value (number and string bounds), with its zod spelling. */
  protected refine(test: (value: never) => boolean, real: (s: never) => Zod.ZodType): this {
    const Self = this.constructor as new (check: Check, real: Real) => this
    return new Self(
      (v) => {
        const r = this.check(v)
        return r.ok && test(r.value as never) ? r : REJECT
      },
      (z) => real(this.real(z) as never),
    )
  }
  extend(shape: Record<string, LiteSchema>): LiteSchema {
    if (!this.shapeOf) return unsupported((z) => (this.real(z) as Zod.ZodObject).extend(realShape(z, shape)))
    return objectOf({ ...this.shapeOf.shape, ...shape }, this.shapeOf.loose)
  }
}

class LiteNumber extends LiteSchema {
  int(): LiteNumber {
    return this.refine(
      (n: number) => Number.isSafeInteger(n),
      (s: Zod.ZodNumber) => s.int(),
    )
  }
  positive(): LiteNumber {
    return this.refine(
      (n: number) => n > 0,
      (s: Zod.ZodNumber) => s.positive(),
    )
  }
  nonnegative(): LiteNumber {
    return this.refine(
      (n: number) => n >= 0,
      (s: Zod.ZodNumber) => s.nonnegative(),
    )
  }
  min(bound: number): LiteNumber {
    return this.refine(
      (n: number) => n >= bound,
      (s: Zod.ZodNumber) => s.min(bound),
    )
  }
}

class LiteString extends LiteSchema {
  min(length: number): LiteString {
    return this.refine(
      (s: string) => s.length >= length,
      (s: Zod.ZodString) => s.min(length),
    )
  }
}

class LiteEnum extends LiteSchema {
  constructor(readonly options: readonly string[]) {
    super(
      (v) => (typeof v === 'string' && options.includes(v) ? ok(v) : REJECT),
      (z) => z.enum(options as [string, ...string[]]),
    )
  }
  get enum(): Record<string, string> {
    return Object.fromEntries(this.options.map((o) => [o, o]))
  }
}

/** A schema whose checks are zod's alone (a feature this module does not model). */
function unsupported(real: Real): LiteSchema {
  return new LiteSchema(() => REJECT, real)
}

function realShape(z: typeof Zod, shape: Record<string, LiteSchema>): Record<string, Zod.ZodType> {
  return Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, s.real(z)]))
}

/** zod's object: the shape's keys in its order (a missing optional one left out), then, when loose, the others as they are. */
function objectOf(shape: Record<string, LiteSchema>, loose: boolean): LiteSchema {
  const keys = Object.keys(shape)
  const known = new Set(keys)
  return new LiteSchema(
    (v) => {
      if (!isPlainObject(v)) return REJECT
      const out: Record<string, unknown> = {}
      for (const key of keys) {
        const present = key in v
        const r = shape[key].check(v[key])
        if (!r.ok) return REJECT
        if (r.value !== undefined || present) out[key] = r.value
      }
      if (loose) for (const key of Object.keys(v)) if (!known.has(key)) out[key] = v[key]
      return ok(out)
    },
    (z) => (loose ? z.looseObject(realShape(z, shape)) : z.object(realShape(z, shape))),
    false,
    { shape, loose },
  )
}

export const string = (): LiteString =>
  new LiteString(
    (v) => (typeof v === 'string' ? ok(v) : REJECT),
    (z) => z.string(),
  )
export const number = (): LiteNumber =>
  new LiteNumber(
    (v) => (typeof v === 'number' && Number.isFinite(v) ? ok(v) : REJECT),
    (z) => z.number(),
  )
export const boolean = (): LiteSchema =>
  new LiteSchema(
    (v) => (typeof v === 'boolean' ? ok(v) : REJECT),
    (z) => z.boolean(),
  )
export const unknown = (): LiteSchema =>
  new LiteSchema(
    (v) => ok(v),
    (z) => z.unknown(),
    true,
  )
export const literal = (value: string | number | boolean): LiteSchema =>
  new LiteSchema(
    (v) => (v === value ? ok(v) : REJECT),
    (z) => z.literal(value),
    false,
    undefined,
    value,
  )
const enum_ = (options: readonly string[]): LiteEnum => new LiteEnum(options)
export { enum_ as enum }
export const object = (shape: Record<string, LiteSchema>): LiteSchema => objectOf(shape, false)
export const looseObject = (shape: Record<string, LiteSchema>): LiteSchema => objectOf(shape, true)

export function array(item: LiteSchema): LiteSchema & { min(n: number): LiteSchema } {
  const check: Check = (v) => {
    if (!Array.isArray(v)) return REJECT
    const out = new Array(v.length)
    for (let i = 0; i < v.length; i++) {
      const r = item.check(v[i])
      if (!r.ok) return REJECT
      out[i] = r.value
    }
    return ok(out)
  }
  const schema = new LiteSchema(check, (z) => z.array(item.real(z)))
  return Object.assign(schema, {
    min: (n: number) =>
      new LiteSchema(
        (v) => (Array.isArray(v) && v.length >= n ? check(v) : REJECT),
        (z) => z.array(item.real(z)).min(n),
      ),
  })
}

export function record(key: LiteSchema, value: LiteSchema): LiteSchema {
  const real: Real = (z) => z.record(key.real(z) as Zod.ZodString, value.real(z))
  // Only string keys are modelled (the only ones JSON has); another key schema is zod's alone.
  if (!(key instanceof LiteString) || key.check('') === REJECT) return unsupported(real)
  return new LiteSchema((v) => {
    if (!isPlainObject(v)) return REJECT
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(v)) {
      if (!key.check(k).ok) return REJECT
      const r = value.check(v[k])
      if (!r.ok) return REJECT
      out[k] = r.value
    }
    return ok(out)
  }, real)
}

/** zod's union: the first option that accepts the value (options here accept disjoint types). */
export function union(options: LiteSchema[]): LiteSchema {
  return new LiteSchema(
    (v) => {
      for (const o of options) {
        const r = o.check(v)
        if (r.ok) return r
      }
      return REJECT
    },
    (z) => z.union(options.map((o) => o.real(z)) as [Zod.ZodType, Zod.ZodType]),
  )
}

/** zod's discriminated union over object options whose `key` is a literal; any other option leaves it all to zod. */
export function discriminatedUnion(key: string, options: LiteSchema[]): LiteSchema {
  const real: Real = (z) => z.discriminatedUnion(key, options.map((o) => o.real(z)) as [Zod.ZodObject, Zod.ZodObject])
  const byValue = new Map<unknown, LiteSchema>()
  for (const o of options) {
    const tag = o.shapeOf?.shape[key]?.literalValue
    if (tag === undefined || byValue.has(tag)) return unsupported(real)
    byValue.set(tag, o)
  }
  return new LiteSchema((v) => {
    if (!isPlainObject(v)) return REJECT
    const option = byValue.get(v[key])
    return option ? option.check(v) : REJECT
  }, real)
}
