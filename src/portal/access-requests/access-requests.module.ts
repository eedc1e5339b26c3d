import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../../events/events.module';
import { AppEntity } from '../apps/app.entity';
import { AccessRequestEntity } from './access-request.entity';
import { AccessRequestsController } from './access-requests.controller';
import { AccessRequestsService } from './access-requests.service';
import { CredentialEntity } from './credential.entity';
import { CredentialIssuer } from './credential-issuer';
import { DcrClient } from './dcr.client';

/** Portal access requests, their state machine and the credentials issued on approval. */
@Module({
  imports: [TypeOrmModule.forFeature([AccessRequestEntity, CredentialEntity, AppEntity]), EventsModule],
  controllers: [AccessRequestsController],
  providers: [AccessRequestsService, CredentialIssuer, DcrClient],
  exports: [AccessRequestsService],
})
export class AccessRequestsModule {}
