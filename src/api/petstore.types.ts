// Generated from src/api/petstore.openapi.yaml (openapi-typescript 7.13.0) by:
//   petstore-load types --spec src/api/petstore.openapi.yaml --out src/api/petstore.types.ts --no-api-type
// Do not edit: run that command again when the document changes.

export interface paths {
    "/pets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List pets
         * @description Lists pets ordered by id, ascending. `status` and `categoryId` are
         *     optional filters; if both are given, both must match. A `categoryId`
         *     that names no category gives an empty list. Pagination uses `limit`
         *     and `offset`.
         *
         *     Our choice (x-inferred): the seed does not show this operation.
         */
        get: operations["listPets"];
        put?: never;
        /**
         * Create a pet
         * @description Creates a pet. The service assigns its id.
         *
         *     Our choice (x-inferred; the seed does not show this operation or any
         *     state transition):
         *     - `status` defaults to `available`.
         *     - An inventory entry is created for the pet with quantity 1 and the
         *       pet's status (state rules 1 and 2).
         *     - An explicit `status` holds until the next stock or order change
         *       (state rule 4).
         *     - A `categoryId` that names no existing category gives 400 with code
         *       `unknown_category`.
         */
        post: operations["createPet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/pets/{petId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the pet. */
                petId: components["parameters"]["petId"];
            };
            cookie?: never;
        };
        /**
         * Get a pet by id (deprecated)
         * @deprecated
         * @description Returns one pet. The operation is deprecated and has a sunset date
         *     (seed).
         *
         *     Our choices (x-inferred; the seed shows neither the dates nor the
         *     response body):
         *     - The response body is a Pet.
         *     - Deprecated since 2026-01-01T00:00:00Z (`x-deprecation`); sunset at
         *       2028-06-30T00:00:00Z (`x-sunset`).
         *     - Every response carries `Deprecation: @1767225600` (RFC 9745,
         *       `@<unix-seconds>` of `x-deprecation`), `Sunset: Fri, 30 Jun 2028
         *       00:00:00 GMT` (RFC 8594, IMF-fixdate of `x-sunset`) and
         *       `Link: </openapi.yaml>; rel="sunset"` (this document).
         *     - After the sunset date, the operation answers 410 Gone with an Error
         *       body (code `gone`).
         */
        get: operations["getPetById"];
        /**
         * Replace a pet
         * @description Replaces the pet's fields with the body (full replacement). The id
         *     stays the same.
         *
         *     Our choice (x-inferred; the seed does not show this operation):
         *     - An explicit `status` is also set on the pet's inventory entry (state
         *       rule 2). It holds until the next stock or order change (state rule
         *       4).
         *     - If `status` is omitted, the current status is kept.
         *     - The stock is not changed.
         *     - A `categoryId` that names no existing category gives 400 with code
         *       `unknown_category`.
         */
        put: operations["updatePet"];
        post?: never;
        /**
         * Delete a pet
         * @description Deletes the pet.
         *
         *     Our choice (x-inferred; the seed does not show this operation):
         *     deleting a pet also deletes its inventory entry. Its orders remain as
         *     history (state rule 7).
         */
        delete: operations["deletePet"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/categories": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List categories
         * @description Lists categories ordered by id, ascending. Pagination uses `limit` and
         *     `offset`.
         *
         *     Our choice (x-inferred): the seed does not show this operation.
         */
        get: operations["listCategories"];
        put?: never;
        /**
         * Create a category
         * @description Creates a category. The service assigns its id.
         *
         *     Our choice (x-inferred): the seed does not show this operation.
         */
        post: operations["createCategory"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/categories/{categoryId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the category. Our choice (the seed shows no category endpoints). */
                categoryId: components["parameters"]["categoryId"];
            };
            cookie?: never;
        };
        /**
         * Get a category by id
         * @description Returns one category.
         *
         *     Our choice (x-inferred): the seed does not show this operation.
         */
        get: operations["getCategory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/store/orders": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List orders
         * @description Lists orders (seed). Orders of deleted pets are included as history.
         *
         *     Our choice (x-inferred; the seed shows neither parameters nor body):
         *     - Pagination uses `limit` and `offset`.
         *     - The body is an array of Order objects, ordered by id, ascending.
         */
        get: operations["listOrders"];
        put?: never;
        /**
         * Place an order for a pet
         * @description Places an order. The service assigns the id and ignores any `id` in
         *     the body. `quantity` defaults to 1 and must be at least 1. `complete`
         *     defaults to false. `shipDate` defaults to one day after the order is
         *     placed.
         *
         *     Our choice (x-inferred; the seed does not show this operation or any
         *     state transition):
         *     - The order reserves `quantity` units from the pet's stock. If the
         *       quantity is more than the stock, the answer is 409 with code
         *       `insufficient_stock` and nothing changes (state rule 3).
         *     - The pet's status is then derived again (state rule 4).
         *     - An order placed with `complete: true` is fulfilled at once.
         *     - A `petId` that names no pet gives 400 with code `unknown_pet`.
         */
        post: operations["placeOrder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/store/orders/{orderId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the order. Our choice (the seed shows no single-order endpoints). */
                orderId: components["parameters"]["orderId"];
            };
            cookie?: never;
        };
        /**
         * Get an order by id
         * @description Returns one order.
         *
         *     Our choice (x-inferred): the seed does not show this operation.
         */
        get: operations["getOrder"];
        put?: never;
        post?: never;
        /**
         * Cancel an order
         * @description Cancels and deletes an incomplete order.
         *
         *     Our choice (x-inferred; the seed does not show this operation or any
         *     state transition):
         *     - The order's quantity goes back to the pet's stock, and the pet's
         *       status is derived again (state rules 4 and 5).
         *     - If the pet has been deleted, the order is cancelled without a stock
         *       change.
         *     - A completed order cannot be cancelled: 409 with code
         *       `order_complete`.
         */
        delete: operations["deleteOrder"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/store/orders/{orderId}/complete": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the order. Our choice (the seed shows no single-order endpoints). */
                orderId: components["parameters"]["orderId"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Complete (fulfil) an order
         * @description Marks an order complete. Takes no body. Its other fields stay the
         *     same.
         *
         *     Our choice (x-inferred): the seed has no way to fulfil an order, so we
         *     add one to make `sold` reachable.
         *     - The pet's status is derived again (state rules 4 and 5). A pet with
         *       stock 0 and no incomplete order left becomes `sold`.
         *     - An order that is already complete gives 409 with code
         *       `order_complete`.
         */
        post: operations["completeOrder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/store/inventory": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List inventory entries
         * @description Lists inventory entries (one per pet) ordered by petId, ascending.
         *     `status` is an optional filter. Pagination uses `limit` and `offset`.
         *
         *     Our choice (x-inferred; the seed does not show this operation):
         *     - Stability `beta`. The seed marks some endpoints beta or experimental
         *       without naming them. Inventory is the newest resource, and its shape
         *       (per-pet stock) may still change.
         */
        get: operations["listInventory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/store/inventory/{petId}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the pet. */
                petId: components["parameters"]["petId"];
            };
            cookie?: never;
        };
        /**
         * Get a pet's inventory entry
         * @description Returns the inventory entry of one pet.
         *
         *     Our choice (x-inferred; the seed does not show this operation):
         *     - Stability `beta`. The seed marks some endpoints beta or experimental
         *       without naming them. Inventory is the newest resource, and its shape
         *       (per-pet stock) may still change.
         */
        get: operations["getInventoryItem"];
        /**
         * Set a pet's stock
         * @description Sets the stock count of one pet. `quantity` must be at least 0.
         *
         *     Our choice (x-inferred; the seed does not show this operation or any
         *     state transition):
         *     - The pet's status and the entry's status are derived again from the
         *       new stock and the pet's incomplete orders (state rules 4 and 6).
         *     - Stability `experimental`. Direct stock writes bypass the order flow,
         *       and their rules may change.
         */
        put: operations["updateInventory"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * @description Availability status.
         * @enum {string}
         */
        PetStatus: "available" | "pending" | "sold";
        /** @description The shape sent to create a pet. */
        NewPet: {
            /** @description The animal's name. */
            name: string;
            /**
             * Format: int64
             * @description Id of the category the animal belongs to.
             */
            categoryId: number;
            status?: components["schemas"]["PetStatus"];
        };
        /** @description A pet. Every NewPet field, plus the id assigned on creation. */
        Pet: components["schemas"]["NewPet"] & {
            /**
             * Format: int64
             * @description Unique identifier assigned on creation.
             */
            id: number;
        };
        /** @description An array of Pet objects. */
        Pets: components["schemas"]["Pet"][];
        /** @description The shape sent to create a category. */
        NewCategory: {
            /** @description Category name (for example a kind of animal). */
            name: string;
            /** @description Short description of the category. */
            description?: string;
        };
        /** @description A category. Every NewCategory field, plus the id assigned on creation. */
        Category: components["schemas"]["NewCategory"] & {
            /**
             * Format: int64
             * @description Unique identifier assigned on creation.
             */
            id: number;
        };
        /** @description An array of Category objects. Our choice; the seed defines no such schema. */
        Categories: components["schemas"]["Category"][];
        /** @description An order for a pet. No field is required. */
        Order: {
            /**
             * Format: int64
             * @description Unique order identifier.
             */
            id?: number;
            /**
             * Format: int64
             * @description Id of the animal in this order.
             */
            petId?: number;
            /**
             * Format: int32
             * @description Number of units ordered. The seed says integer; the int32 format is our choice.
             */
            quantity?: number;
            /**
             * Format: date-time
             * @description Expected or actual ship date (ISO 8601).
             */
            shipDate?: string;
            /** @description Whether the order has been fulfilled. */
            complete?: boolean;
        };
        /** @description An array of Order objects. Our choice; the seed defines no such schema. */
        Orders: components["schemas"]["Order"][];
        /**
         * @description The request shape of placeOrder: an Order with `petId` required. The
         *     service assigns `id` and ignores any id sent. `quantity` defaults to 1
         *     and must be at least 1. `complete` defaults to false. `shipDate`
         *     defaults to one day after the order is placed. Our choice; the seed
         *     shows no request shape for orders.
         */
        NewOrder: components["schemas"]["Order"] & {
            /** @default 1 */
            quantity?: number;
            /** @default false */
            complete?: boolean;
        };
        /** @description The inventory entry that tracks the stock count of a pet. */
        InventoryItem: {
            /**
             * Format: int64
             * @description Id of the animal this entry tracks.
             */
            petId: number;
            /**
             * Format: int32
             * @description Current stock count. The seed says integer; the int32 format is our choice.
             */
            quantity: number;
            status: components["schemas"]["PetStatus"];
        };
        /** @description An array of InventoryItem objects. Our choice; the seed defines no such schema. */
        Inventory: components["schemas"]["InventoryItem"][];
        /** @description The new stock count of a pet. */
        InventoryUpdate: {
            /**
             * Format: int32
             * @description The new stock count. The seed says integer; the int32 format is our choice.
             */
            quantity: number;
        };
        /** @description The body of every error response. */
        Error: {
            /** @description Machine-readable error code. The values are listed in the top-level x-error-codes (our choice). */
            code: string;
            /** @description Human-readable description. */
            message: string;
            /**
             * Format: int32
             * @description The HTTP status code. The seed says integer; the int32 format is our choice.
             */
            status: number;
        };
    };
    responses: {
        /**
         * @description Bad request (seed): the body is invalid JSON, a required field is
         *     missing, or a request body's content type is not `application/json`.
         *     Our choice (x-inferred): also a field of the wrong type or out of
         *     range, and an invalid query or path parameter. Codes are
         *     `bad_request`, `unsupported_media_type` (content type), and
         *     `unknown_category` / `unknown_pet` where the operation says so.
         *     Returning an Error body for it on every operation is also our choice.
         */
        BadRequest: {
            headers: {
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description The API key is missing or invalid (seed). Our choice (x-inferred): code
         *     `unauthorized`, an Error body, and a `WWW-Authenticate: Bearer` header.
         *     The request counts against the client address's Free-plan quota.
         */
        Unauthorized: {
            headers: {
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The resource named in the path does not exist (code `not_found`). Our choice. */
        NotFound: {
            headers: {
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description The request conflicts with the current state. Codes are
         *     `insufficient_stock` (placeOrder) and `order_complete` (completeOrder,
         *     deleteOrder). Our choice.
         */
        Conflict: {
            headers: {
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The request body is over 1 MiB (code `payload_too_large`). Our choice; the seed shows no size limit. */
        PayloadTooLarge: {
            headers: {
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description The rate limit is exceeded (seed). Back off and retry after the time in
         *     `Retry-After`. Our choice (x-inferred):
         *     - Code `rate_limited` when a per-minute or per-day quota is spent.
         *     - Code `temporarily_banned` when the key is banned. The 6th request
         *       sent after a 429, before that 429's Retry-After has elapsed, bans
         *       the key for 10 minutes, and while banned `Retry-After` is the rest
         *       of the ban.
         *     - Requests rejected with 429 do not count against the quota.
         */
        TooManyRequests: {
            headers: {
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /**
         * @description An unexpected server error (code `internal_error`). The reference
         *     server sends it only when fault injection is enabled. Our choice.
         */
        InternalError: {
            headers: {
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: {
        /** @description Id of the pet. */
        petId: number;
        /** @description Id of the category. Our choice (the seed shows no category endpoints). */
        categoryId: number;
        /** @description Id of the order. Our choice (the seed shows no single-order endpoints). */
        orderId: number;
        /** @description Only items with this status. Our choice. */
        statusFilter: components["schemas"]["PetStatus"];
        /** @description Maximum number of items to return (1 to 100, default 20). Out-of-range values get 400. Our choice; the seed shows no pagination. */
        limit: number;
        /** @description Number of items to skip (default 0). Negative values get 400. Our choice; the seed shows no pagination. */
        offset: number;
    };
    requestBodies: never;
    headers: {
        /**
         * @description The limit that applies (seed): the request limit of the window these
         *     headers describe. Our choice (x-inferred): the three X-RateLimit-*
         *     headers describe the limit closest to running out. That is the window
         *     (per-minute or per-day) with the fewest requests remaining, or on a
         *     tie the one that resets later.
         * @example 60
         */
        "X-RateLimit-Limit": number;
        /**
         * @description Requests left in the current window (seed). Our choice (x-inferred):
         *     the three X-RateLimit-* headers describe the limit closest to running
         *     out. That is the window (per-minute or per-day) with the fewest
         *     requests remaining, or on a tie the one that resets later. The value
         *     is 0 while the key is temporarily banned.
         * @example 59
         */
        "X-RateLimit-Remaining": number;
        /**
         * @description Unix timestamp at which the limit resets (seed), in seconds (our
         *     choice). Our choice (x-inferred): the three X-RateLimit-* headers
         *     describe the limit closest to running out. That is the window
         *     (per-minute or per-day) with the fewest requests remaining, or on a
         *     tie the one that resets later. While the key is temporarily banned,
         *     the value is the time the ban ends.
         * @example 1767225660
         */
        "X-RateLimit-Reset": number;
        /**
         * @description Sent with a 429 response; the time after which to retry (seed). Our
         *     choice (x-inferred): the server sends delay-seconds (RFC 9110), an
         *     integer number of seconds. The value matches X-RateLimit-Reset: the
         *     seconds until that time, rounded up. While the key is temporarily
         *     banned, the value is the rest of the ban.
         * @example 30
         */
        "Retry-After": number;
        /**
         * @description RFC 9745 deprecation date as `@<unix-seconds>`, taken from the
         *     operation's `x-deprecation` (for getPetById, `@1767225600`,
         *     2026-01-01T00:00:00Z). Our choice; the seed shows no header.
         * @example @1767225600
         */
        Deprecation: string;
        /**
         * @description RFC 8594 sunset date as an IMF-fixdate, taken from the operation's
         *     `x-sunset` (for getPetById, `Fri, 30 Jun 2028 00:00:00 GMT`). Our
         *     choice; the seed shows no header or date.
         * @example Fri, 30 Jun 2028 00:00:00 GMT
         */
        Sunset: string;
        /**
         * @description Points to this document for sunset information:
         *     `</openapi.yaml>; rel="sunset"`. Our choice.
         * @example </openapi.yaml>; rel="sunset"
         */
        Link: string;
        /**
         * @description The authentication scheme to use, `Bearer`, sent with every 401. Our
         *     choice.
         * @example Bearer
         */
        "WWW-Authenticate": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listPets: {
        parameters: {
            query?: {
                /** @description Only items with this status. Our choice. */
                status?: components["parameters"]["statusFilter"];
                /** @description Only pets in this category. Our choice. */
                categoryId?: number;
                /** @description Maximum number of items to return (1 to 100, default 20). Out-of-range values get 400. Our choice; the seed shows no pagination. */
                limit?: components["parameters"]["limit"];
                /** @description Number of items to skip (default 0). Negative values get 400. Our choice; the seed shows no pagination. */
                offset?: components["parameters"]["offset"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of pets. */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pets"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    createPet: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPet"];
            };
        };
        responses: {
            /** @description The created pet. */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    getPetById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the pet. */
                petId: components["parameters"]["petId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The pet. That the body is a Pet is our choice; the seed only presumes it. */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["Link"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description No pet has this id (code `not_found`). Carries the deprecation headers like every response of this operation. Our choice. */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["Link"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The sunset date has passed (code `gone`). Our choice. */
            410: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    Deprecation: components["headers"]["Deprecation"];
                    Sunset: components["headers"]["Sunset"];
                    Link: components["headers"]["Link"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    updatePet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the pet. */
                petId: components["parameters"]["petId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPet"];
            };
        };
        responses: {
            /** @description The updated pet. */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    deletePet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the pet. */
                petId: components["parameters"]["petId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The pet was deleted. No body. */
            204: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    listCategories: {
        parameters: {
            query?: {
                /** @description Maximum number of items to return (1 to 100, default 20). Out-of-range values get 400. Our choice; the seed shows no pagination. */
                limit?: components["parameters"]["limit"];
                /** @description Number of items to skip (default 0). Negative values get 400. Our choice; the seed shows no pagination. */
                offset?: components["parameters"]["offset"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of categories. */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Categories"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    createCategory: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewCategory"];
            };
        };
        responses: {
            /** @description The created category. */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Category"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    getCategory: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the category. Our choice (the seed shows no category endpoints). */
                categoryId: components["parameters"]["categoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The category. */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Category"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    listOrders: {
        parameters: {
            query?: {
                /** @description Maximum number of items to return (1 to 100, default 20). Out-of-range values get 400. Our choice; the seed shows no pagination. */
                limit?: components["parameters"]["limit"];
                /** @description Number of items to skip (default 0). Negative values get 400. Our choice; the seed shows no pagination. */
                offset?: components["parameters"]["offset"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of orders. That the body is an array of Order is our choice. */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Orders"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    placeOrder: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewOrder"];
            };
        };
        responses: {
            /** @description The placed order, with every field set. */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Order"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    getOrder: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the order. Our choice (the seed shows no single-order endpoints). */
                orderId: components["parameters"]["orderId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The order. */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Order"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    deleteOrder: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the order. Our choice (the seed shows no single-order endpoints). */
                orderId: components["parameters"]["orderId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The order was cancelled. No body. */
            204: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    completeOrder: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the order. Our choice (the seed shows no single-order endpoints). */
                orderId: components["parameters"]["orderId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The completed order (`complete` is true). */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Order"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    listInventory: {
        parameters: {
            query?: {
                /** @description Only items with this status. Our choice. */
                status?: components["parameters"]["statusFilter"];
                /** @description Maximum number of items to return (1 to 100, default 20). Out-of-range values get 400. Our choice; the seed shows no pagination. */
                limit?: components["parameters"]["limit"];
                /** @description Number of items to skip (default 0). Negative values get 400. Our choice; the seed shows no pagination. */
                offset?: components["parameters"]["offset"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of inventory entries. */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Inventory"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    getInventoryItem: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the pet. */
                petId: components["parameters"]["petId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The inventory entry. */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InventoryItem"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    updateInventory: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of the pet. */
                petId: components["parameters"]["petId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["InventoryUpdate"] & {
                    quantity?: number;
                };
            };
        };
        responses: {
            /** @description The updated inventory entry. */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InventoryItem"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
}
