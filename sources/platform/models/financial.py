"""Store financial data: transfers and buyer fiscal documents (spec parts 2.9 and 2.10)."""

from __future__ import annotations

from .common import ApiModel, CodeDescription, DateOrTimestamp, Money, Timestamp
from .enums import BankAccountType, TransferStatus

# --- 2.9 Transfer ---


class BankAccount(ApiModel):
    type: BankAccountType | None = None
    bankCode: str
    agency: str
    account: str


class Transfer(ApiModel):
    id: str
    value: Money
    # "the transfer dates may be date-only" (spec part 1)
    requestedAt: DateOrTimestamp | None = None
    completedAt: DateOrTimestamp | None = None
    createdAt: DateOrTimestamp
    status: TransferStatus
    details: str | None = None
    bankAccount: BankAccount


# --- 2.10 Buyer fiscal document ---


class Taxation(ApiModel):
    nbs: CodeDescription
    taxClassification: CodeDescription
    operationIndicator: CodeDescription


class FiscalDocumentDocument(ApiModel):
    id: str
    name: str
    status: str
    type: str
    baseValue: Money
    emissionDate: Timestamp
    referenceDate: Timestamp
    processingDate: Timestamp
    taxation: Taxation


class SourceAddress(ApiModel):
    street: str
    number: str
    complement: str
    district: str
    zipCode: str
    city: str
    uf: str


class FiscalDocumentSource(ApiModel):
    taxType: str | None = None
    companyName: str
    document: str
    ie: str
    im: str | None = None
    email: str
    tel: str | None = None
    tel2: str
    cell: str | None = None
    address: SourceAddress


class DestinationAddress(ApiModel):
    zipCode: str
    street: str | None = None
    number: str | None = None
    complement: str | None = None
    district: str | None = None
    countryForeign: str | None = None
    city: str | None = None
    uf: str | None = None
    country: str | None = None


class FiscalDocumentDestination(ApiModel):
    companyName: str
    taxType: str
    taxId: str
    ie: str
    im: str | None = None
    email: str
    tel: str | None = None
    tel2: str | None = None
    cell: str
    address: DestinationAddress


class FiscalDocumentSale(ApiModel):
    id: str
    paymentDate: Timestamp
    total: Money


class ClientAddress(ApiModel):
    zipCode: str
    street: str | None = None
    number: str | None = None
    complement: str | None = None
    neighborhood: str | None = None
    city: str | None = None
    state: str | None = None


class FiscalDocumentClient(ApiModel):
    id: str
    name: str
    document: str
    email: str
    cellphone: str
    telephone: str | None = None
    telephone2: str | None = None
    address: ClientAddress


class ProductRef(ApiModel):
    id: str
    title: str


class FiscalDocument(ApiModel):
    document: FiscalDocumentDocument
    source: FiscalDocumentSource
    destination: FiscalDocumentDestination
    sale: FiscalDocumentSale
    client: FiscalDocumentClient
    product: ProductRef
    generatedByNewSystem: bool
