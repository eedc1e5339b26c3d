import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../../events/events.module';
import { AccessRequestsModule } from '../access-requests/access-requests.module';
import { AppEntity } from './app.entity';
import { AppsController } from './apps.controller';
import { AppsService } from './apps.service';

/** Portal applications. */
@Module({
  imports: [TypeOrmModule.forFeature([AppEntity]), AccessRequestsModule, EventsModule],
  controllers: [AppsController],
  providers: [AppsService],
})
export class AppsModule {}
