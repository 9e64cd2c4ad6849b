// `api.call` checked against a document at compile time: types over what openapi-typescript makes of
// it (`petstore-load types`, src/cli/types.ts). Types only; the call at run time is `api.call` as it
// is. They import nothing but the call's own shapes, so that the declarations users read stop here.
import type { CallInput, ResponseHeaders } from './call-types.ts';

type Defined<T> = Exclude<T, undefined>;
/** The type of `T[K]` without the `undefined` of an optional key; never when T has no such key. */
type At<T, K extends PropertyKey> = K extends keyof T ? Defined<T[K]> : never;
/** True when T may leave K out (an optional key, or no key at all). */
type MayOmit<T, K extends PropertyKey> = K extends keyof T
  ? Record<never, never> extends Pick<T, K>
    ? true
    : false
  : true;

/** A member named `Name` of the call's input, as required or optional as `From[K]` is, or forbidden. */
type Member<From, K extends PropertyKey, Name extends string, Value> = [At<From, K>] extends [never]
  ? { [_ in Name]?: never }
  : MayOmit<From, K> extends true
    ? { [_ in Name]?: Value }
    : { [_ in Name]: Value };

type ParamsOf<Op> = At<Op, 'parameters'>;

/** The bodies of a content map's JSON media types (`application/json`, `application/problem+json`). */
type JsonOf<Content> = {
  [M in keyof Content]: M extends `${string}json${string}` ? Content[M] : never;
}[keyof Content];

/** A request or response body as the client handles it: JSON typed, another media type unknown. */
type BodyOf<Content> = [Content] extends [never]
  ? undefined
  : [JsonOf<Content>] extends [never]
    ? unknown
    : JsonOf<Content>;

/**
 * Header parameters are sent as text: one the document types as a number is given as a string, and
 * headers the document does not declare (a trace id) may be added beside them.
 */
type HeadersOf<Declared> = { [H in keyof Declared]: Declared[H] extends string ? Declared[H] : string } & {
  [name: string]: string;
};

/** The headers member: the declared ones (required where the document says) and any others. */
type HeadersMember<Op> = [At<ParamsOf<Op>, 'header'>] extends [never]
  ? { headers?: { [name: string]: string } }
  : Member<ParamsOf<Op>, 'header', 'headers', HeadersOf<At<ParamsOf<Op>, 'header'>>>;

/**
 * What `api.call(operationId, input)` takes for one operation: `path`, `query` and `headers` from its
 * parameters, `body` from its request body (each required where the document requires it, absent
 * where the operation has none), beside what any call may carry (`auth`, `retry`, `rawBody`, ...).
 */
export type TypedCallInput<Op> = Omit<CallInput, 'path' | 'query' | 'body' | 'headers'> &
  Member<ParamsOf<Op>, 'path', 'path', At<ParamsOf<Op>, 'path'>> &
  Member<ParamsOf<Op>, 'query', 'query', At<ParamsOf<Op>, 'query'>> &
  HeadersMember<Op> &
  Member<Op, 'requestBody', 'body', BodyOf<At<At<Op, 'requestBody'>, 'content'>>>;

type Digit = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9';
type ToNumber<Text> = Text extends `${infer N extends number}` ? N : never;
/** The statuses of the classes named by their first digit: StatusIn<'4'> is 400 | 401 | ... | 499. */
type StatusIn<First extends string> = ToNumber<`${First}${Digit}${Digit}`>;
/** A range key's class: `"4XX"` is '4'. */
type RangeOf<Key> = Key extends `${infer First extends Digit}${'XX' | 'xx'}` ? First : never;

/** The statuses an operation names one by one (`404`), and those its ranges (`"4XX"`) hold. */
type Codes<R> = ToNumber<`${keyof R & (string | number)}`>;
type RangeCodes<R> = StatusIn<RangeOf<keyof R>>;

/**
 * One declared response as the answers it stands for: a code for itself; a range for its class but
 * the codes named beside it; `default` for every status named nowhere else, split into the 2xx
 * (`ok` true) and the rest. So a comparison with a status (`res.status === 201`) narrows to the one
 * response a server answering that status sends.
 */
type AnswersOf<R, Key extends keyof R> = Key extends 'default'
  ?
      | TypedAnswer<Exclude<StatusIn<'2'>, Codes<R> | RangeCodes<R>>, true, BodyOf<At<R[Key], 'content'>>>
      | TypedAnswer<
          Exclude<StatusIn<'1' | '3' | '4' | '5'>, Codes<R> | RangeCodes<R>>,
          false,
          BodyOf<At<R[Key], 'content'>>
        >
  : [RangeOf<Key>] extends [never]
    ? TypedAnswer<ToNumber<`${Key & (string | number)}`>, OkOf<Key>, BodyOf<At<R[Key], 'content'>>>
    : TypedAnswer<Exclude<StatusIn<RangeOf<Key>>, Codes<R>>, OkOf<Key>, BodyOf<At<R[Key], 'content'>>>;

/** Whether a response of that key is a 2xx. */
type OkOf<Key> = `${Key & (string | number)}` extends `2${string}` ? true : false;

/** An answer to a call, its body typed by its status. */
export interface TypedAnswer<Status extends number, Ok extends boolean, Body> {
  readonly status: Status;
  /** A 2xx status. */
  readonly ok: Ok;
  readonly headers: ResponseHeaders;
  /** The JSON body, parsed (undefined when empty or not JSON). */
  readonly body: Body;
  readonly error?: undefined;
  /** Requests sent for this call, retries included. */
  readonly attempts: number;
}

/** No answer came (`error` says why: `ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`). */
export interface NoAnswer {
  readonly status: 0;
  readonly ok: false;
  readonly headers: ResponseHeaders;
  readonly body: undefined;
  readonly error: string;
  readonly attempts: number;
}

type Responses<Op> = At<Op, 'responses'>;

/**
 * What a call of one operation returns: one member per response the document declares, `status` the
 * discriminant (`if (res.status === 200) res.body.name`), or no answer at all (status 0). A status the
 * document does not declare (a proxy's 502) still comes back as it came, whatever the type says.
 */
export type TypedResponse<Op> =
  | { [Key in keyof Responses<Op>]: AnswersOf<Responses<Op>, Key> }[keyof Responses<Op>]
  | NoAnswer;

/** The input argument: optional when the operation requires nothing. */
type InputArgs<Op> =
  Record<never, never> extends TypedCallInput<Op>
    ? [input?: TypedCallInput<Op>]
    : [input: TypedCallInput<Op>];

/**
 * A flow's `api` typed by a document's `operations` (as `petstore-load types` generates them): the
 * operation id one of the document's, the path, query, headers and body the operation's, and the
 * response's body typed by its status.
 *
 * @example
 * import { defineScenario, type TypedApi } from 'petstore-load';
 * import type { operations } from './api-types.ts';
 *
 * export default defineScenario({
 *   name: 'bookings',
 *   workload: { executor: 'constant-vus', vus: 2, duration: '30s' },
 *   flows: [{
 *     name: 'book',
 *     run: async (api: TypedApi<operations>) => {
 *       const res = await api.call('createBooking', { body: { roomId: 7, nights: 2 } });
 *       if (res.status === 201) console.log(res.body.id);
 *     },
 *   }],
 * });
 */
export interface TypedApi<Ops> {
  call<Id extends keyof Ops & string>(
    operationId: Id,
    ...input: InputArgs<Ops[Id]>
  ): Promise<TypedResponse<Ops[Id]>>;
}
